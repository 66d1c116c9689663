/*
 * pincer/service.h — conventions for service tables.
 *
 * A service is a table of function pointers one plugin publishes under a
 * versioned id and any other code in the process looks up:
 *
 *   id       "<vendor>.<name>/<major>", e.g. "pincer.database/1". A change
 *            an old caller cannot survive gets a new id ("/2"); the old one
 *            may be published alongside it.
 *   layout   the table starts with a pincer_service_header_t, so a caller
 *            can check struct_size before using a slot that was appended
 *            later. Every function in it takes a context pointer first
 *            (usually the table's own `context`).
 *   lifetime the publisher keeps the table alive until its shutdown.
 *   threads  each service documents its own; prefer [any-thread].
 */
#ifndef PINCER_SERVICE_H
#define PINCER_SERVICE_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pincer_service_header {
    uint32_t struct_size;   /* size of the whole service table */
    uint32_t version_minor; /* appended-slot counter of this service id */
    void *context;          /* the publisher's pointer, passed to the table's functions */
} pincer_service_header_t;

/* Longest service id the host accepts, in bytes, without the NUL. */
#define PINCER_SERVICE_ID_MAX 128u

#ifdef __cplusplus
}
#endif

#endif /* PINCER_SERVICE_H */
