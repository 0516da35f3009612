/*
 * A cache hint for IsletCore (Sources/IsletCore/Model/Prefetch.swift): Swift has no way to
 * spell it. It never faults, changes no value, and reads no clock or file. It asks for the line
 * to write: most of what the engine prefetches (a widget, a stack, its members and ranking) is
 * written soon after, all on one thread.
 */
#ifndef ISLET_PREFETCH_H
#define ISLET_PREFETCH_H

static inline void islet_prefetch(const void *address) { __builtin_prefetch(address, 1, 3); }

#endif
