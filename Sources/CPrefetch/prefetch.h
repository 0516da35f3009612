/*
 * Cache hints for IsletCore (Sources/IsletCore/Model/Prefetch.swift) and IsletTransport (the
 * fan-out loop): Swift has no way to spell them. They never fault, change no value, and read no
 * clock or file. They ask for the lines to write: most of what is prefetched (a widget, a stack,
 * its members and ranking; a connection's state) is written soon after, all on one thread.
 * The loop over lines is here rather than in Swift because both modules use it and neither
 * imports the other.
 */
#ifndef ISLET_PREFETCH_H
#define ISLET_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

static inline void islet_prefetch(const void *address) { __builtin_prefetch(address, 1, 3); }

/* Every cache line of the `bytes` bytes from `start`. */
static inline void islet_prefetch_lines(const void *start, size_t bytes) {
    if (bytes == 0) return;
    uintptr_t line = (uintptr_t)start & ~(uintptr_t)63;
    uintptr_t last = ((uintptr_t)start + bytes - 1) & ~(uintptr_t)63;
    for (; line <= last; line += 64) __builtin_prefetch((const void *)line, 1, 3);
}

#endif
