/*
 * A cache hint for IsletCore (Sources/IsletCore/Model/Prefetch.swift): Swift has no way to
 * spell it. It never faults, changes no value, and reads no clock or file.
 */
#ifndef ISLET_PREFETCH_H
#define ISLET_PREFETCH_H

static inline void islet_prefetch(const void *address) { __builtin_prefetch(address, 1, 3); }

#endif
