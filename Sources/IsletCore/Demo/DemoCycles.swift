/// The demo activities of the seeds, each a repeating cycle on one phone (see ``DemoCycle``).
extension DemoCycle {
    /// A coffee order every 20 minutes, placed with the "Order my usual" App Shortcut (SC-2):
    /// received, brewing after 3 minutes, on its way after 8, delivered (ended) after 14.
    static let coffee = DemoCycle(
        prefix: "coffee", app: "com.example.coffee", device: "iphone-15-pro", period: minutes(20), runs: minutes(14),
        start: { id, cycle, phase, device in
            let drink = ["Flat white", "Latte", "Cold brew"][Int(cycle % 3)]
            var commands: [JSONValue] = [
                [
                    "type": "shortcut.run", "app": "com.example.coffee", "id": "order-usual",
                    "parameterValue": .string(drink), "device": .string(device),
                    "activityId": .string(id),
                ]
            ]
            if phase.state != ["currentStatus": "received"] {
                commands.append([
                    "type": "activity.update", "id": .string(id), "content": ["state": .object(phase.state)],
                ])
            }
            return commands
        },
        phase: { elapsed, _ in
            let minute = elapsed / 60_000
            let status = minute < 3 ? "received" : (minute < 8 ? "brewing" : "outForDelivery")
            return Phase(
                state: ["currentStatus": .string(status)],
                alert: minute == 8 ? ["title": "On its way!", "body": "Your coffee left the café."] : nil)
        })

    /// A basketball game every 90 minutes: four 12-minute quarters around a 10-minute halftime,
    /// a score that changes every minute, the last plays; final after 58 minutes. The Scores app
    /// follows it on two phones (LA-15): two activities, each with its own push token.
    static func game(prefix: String, on device: String) -> DemoCycle {
        DemoCycle(
            prefix: prefix, app: "com.example.scores", device: device, period: minutes(90), runs: minutes(60),
            start: { id, cycle, phase, device in
                let teams = [("LAL", "BOS"), ("GSW", "NYK"), ("MIA", "CHI")][Int(cycle % 3)]
                var command = request(
                    id, app: "com.example.scores", device: device, type: "SportsScoreAttributes",
                    attributes: ["homeTeam": .string(teams.0), "awayTeam": .string(teams.1), "league": "NBA"],
                    phase: phase, score: 80)
                try? command.set("token", at: "/pushType")
                return [command]
            },
            phase: { elapsed, cycle in gamePhase(minute: Int(elapsed / 60_000), cycle: cycle) })
    }

    /// A 5-minute tea timer started with the "Start a timer" App Shortcut every 8 minutes; the
    /// client counts down to `endsAt`, the driver updates the remaining minutes.
    static let timer = DemoCycle(
        prefix: "timer", app: "com.example.timer", device: "iphone-15-pro", period: minutes(8), runs: minutes(5),
        start: { id, cycle, phase, device in
            var commands: [JSONValue] = [
                [
                    "type": "shortcut.run", "app": "com.example.timer", "id": "start-timer",
                    "parameterValue": "5 minutes", "device": .string(device),
                    "activityId": .string(id),
                ]
            ]
            commands.append(["type": "activity.update", "id": .string(id), "content": ["state": .object(phase.state)]])
            return commands
        },
        phase: { elapsed, cycle in
            let ends = Instant(millisecondsSinceEpoch: cycle * minutes(8) + minutes(5))
            let remaining = (minutes(5) - elapsed) / 60_000 * 60
            return Phase(state: [
                "endsAt": .string(ends.rfc3339), "remainingSeconds": .number(Double(remaining)), "paused": false,
            ])
        })

    /// A ride home every 30 minutes (the "Ride home" App Shortcut): searching, a driver on the
    /// way, on the trip, dropped off after 25 minutes.
    static let ride = DemoCycle(
        prefix: "ride", app: "com.example.ride", device: "iphone-se", period: minutes(30), runs: minutes(25),
        start: { id, _, phase, device in
            var commands: [JSONValue] = [
                [
                    "type": "shortcut.run", "app": "com.example.ride", "id": "ride-home", "activityId": .string(id),
                    "device": .string(device),
                ]
            ]
            commands.append(["type": "activity.update", "id": .string(id), "content": ["state": .object(phase.state)]])
            return commands
        },
        phase: { elapsed, _ in
            let minute = elapsed / 60_000
            let driver: JSONValue = ["name": "Sam", "car": "Blue Prius", "plate": "7ABC123"]
            if minute < 2 { return Phase(state: ["status": "searching"]) }
            if minute < 10 {
                return Phase(
                    state: ["status": "driverFound", "driver": driver, "etaMinutes": .number(Double(10 - minute))],
                    alert: minute == 2 ? ["title": "Sam is on the way", "body": "Blue Prius · 7ABC123"] : nil)
            }
            return Phase(state: ["status": "onTrip", "driver": driver, "etaMinutes": .number(Double(25 - minute))])
        })

    /// A 45-minute run every hour: elapsed time, distance and heart rate each minute.
    static let workout = DemoCycle(
        prefix: "workout", app: "com.example.workout", device: "iphone-16-pro-max", period: minutes(60),
        runs: minutes(45),
        start: { id, _, phase, device in
            [
                request(
                    id, app: "com.example.workout", device: device, type: "WorkoutAttributes",
                    attributes: ["workoutType": "Run"], phase: phase, score: 20)
            ]
        },
        phase: { elapsed, _ in
            let minute = Double(elapsed / 60_000)
            return Phase(state: [
                "elapsedSeconds": .number(minute * 60), "distanceMeters": .number(minute * 180),
                "heartRate": .number(Double(128 + Int(minute) % 7 * 3)), "activeCalories": .number(minute * 11),
                "paused": false,
            ])
        })

    /// The game at `minute` of its cycle: deterministic points from the cycle and the minute.
    static func gamePhase(minute: Int, cycle: Int64) -> Phase {
        var home = 0
        var away = 0
        var plays: [JSONValue] = []
        let playing = { (m: Int) -> Bool in m < 24 || (34..<58).contains(m) }
        for m in 0..<min(minute + 1, 58) where playing(m) {
            let roll = Int(
                (UInt64(bitPattern: cycle) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(m) &* 0xBF58_476D_1CE4_E5B9) >> 59)
            let homePoints = roll % 4
            let awayPoints = (roll / 4 + m) % 4
            home += homePoints
            away += awayPoints
            if homePoints == 3 { plays.append(.string("\(m)′ Home three-pointer")) }
            if awayPoints == 3 { plays.append(.string("\(m)′ Away three-pointer")) }
        }
        let period: String
        let clock: String
        switch minute {
        case 0..<12: (period, clock) = ("Q1", "\(12 - minute):00")
        case 12..<24: (period, clock) = ("Q2", "\(24 - minute):00")
        case 24..<34: (period, clock) = ("HT", "")
        case 34..<46: (period, clock) = ("Q3", "\(46 - minute):00")
        case 46..<58: (period, clock) = ("Q4", "\(58 - minute):00")
        default: (period, clock) = ("Final", "")
        }
        var state: JSONObject = [
            "homeScore": .number(Double(home)), "awayScore": .number(Double(away)), "period": .string(period),
            "plays": .array(Array(plays.suffix(3))),
        ]
        if !clock.isEmpty { state["clock"] = .string(clock) }
        let alert: JSONValue? =
            minute == 24
            ? ["title": "Halftime", "body": .string("\(home)–\(away)")]
            : (minute == 58 ? ["title": "Final", "body": .string("\(home)–\(away)")] : nil)
        return Phase(state: state, alert: alert)
    }
}
