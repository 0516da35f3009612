// Compiled by `tsc --noEmit` only: a harness's use of the client must type-check, and misuse
// must not (each @ts-expect-error fails the check if the declarations stop refusing it).
import { IsletStream, applyPatch, type JSON, type Subscription } from "../islet-stream.js";

const stream = new IsletStream({ url: "ws://127.0.0.1:8080/v1/stream", simulation: "h1", pingInterval: 0 });
const island: Subscription = stream.subscribe("/devices/phone/scene/island", { id: "island" });
stream.addEventListener("change", (event) => {
  const revs: number = event.detail.rev;
  const subs: Subscription[] = event.detail.subs;
  void revs, subs;
});
stream.addEventListener("patch", (event) => {
  // A replayed patch names its subscription by id.
  const id: string | undefined = event.detail.sub;
  // @ts-expect-error: the patch's sub is an id, not a Subscription
  void event.detail.sub?.path;
  void id;
});
stream.addEventListener("error", (event) => {
  // @ts-expect-error: an error message may have "id": null
  const id: string | undefined = event.detail.id;
  const nullable: string | null | undefined = event.detail.id;
  void id, nullable;
});
stream.addEventListener("connection", (event) => {
  const state: "connecting" | "resyncing" | "live" | "offline" | "closed" = event.detail.state;
  void state;
});
async function drive(): Promise<number> {
  const ack = await stream.connect().command([{ type: "clock.advance", seconds: 60 }]);
  return ack.rev;
}
const patched: JSON = applyPatch({ a: 1 }, [{ op: "replace", path: "/a", value: 2 }]);
void island.value, drive, patched;

// @ts-expect-error: subscribe takes a JSON Pointer string
stream.subscribe(42);
// @ts-expect-error: a remove has no value
applyPatch({}, [{ op: "remove", path: "/a", value: 1 }]);
// @ts-expect-error: no such state
const wrong: typeof stream.state = "open";
void wrong;
