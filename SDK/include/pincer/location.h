/*
 * pincer/location.h — the location-spoofing service, "pincer.location/1".
 *
 * Published by the built-in `loc` plugin. An app that embeds the host routes
 * its location provider through this service: while spoofing is on, it uses
 * the fixes delivered here instead of the device's. Look the service up with
 * pincer_host_t.get_service(host, PINCER_LOCATION_SERVICE_ID); NULL means the
 * plugin is not loaded. Check PINCER_HAS_SERVICE_SLOT (service.h) before
 * using a slot appended after version 1.0 of this service.
 *
 * Model: spoofing is on or off, and persisted. When on, there is a current
 * fix: a fixed place (a preset, a place the developer added, or custom
 * coordinates) or the moving position of a route being played. Every fix is
 * marked simulated.
 *
 * Threads: every function is [any-thread]. Subscribed callbacks run on the
 * plugin's playback thread (or on the thread that changed the location);
 * they must return quickly and must not call unsubscribe for themselves.
 * Inputs are borrowed for the call; nothing here hands out memory.
 */
#ifndef PINCER_LOCATION_H
#define PINCER_LOCATION_H

#include "version.h"
#include "service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PINCER_LOCATION_SERVICE_ID "pincer.location/1"

typedef uint32_t pincer_location_fix_flags_t;
#define PINCER_LOCATION_FIX_SIMULATED    (1u << 0) /* always set: the fix is spoofed */
#define PINCER_LOCATION_FIX_HAS_ALTITUDE (1u << 1) /* `altitude` is meaningful */
#define PINCER_LOCATION_FIX_MOVING       (1u << 2) /* from a route being played */

/* One position. Borrowed by callbacks for the duration of the call. */
typedef struct pincer_location_fix {
    uint32_t struct_size;               /* sizeof(pincer_location_fix_t) of the writer */
    pincer_location_fix_flags_t flags;
    double latitude;                    /* degrees, -90...90 (WGS-84) */
    double longitude;                   /* degrees, -180...180 */
    double altitude;                    /* metres; see PINCER_LOCATION_FIX_HAS_ALTITUDE */
    double course;                      /* degrees clockwise from true north, 0...360 */
    double speed;                       /* metres per second */
    double horizontal_accuracy;         /* metres */
    double timestamp;                   /* seconds since 1970-01-01 UTC */
} pincer_location_fix_t;

/* Receives each new fix, and a fix with latitude and longitude NaN and
 * flags 0 when spoofing is switched off. */
typedef void (*pincer_location_fix_fn_t)(void *context, const pincer_location_fix_t *fix);

typedef struct pincer_location_service {
    /* struct_size, version_minor (0 for this layout), context. Pass
     * header.context as the first argument of every function below. */
    pincer_service_header_t header;

    /* Whether spoofing is on. [any-thread] */
    bool (*is_spoofing)(void *context);

    /* Copies the current fix into *fix (set fix->struct_size first; at most
     * that many bytes are written). Returns false, and leaves *fix alone,
     * when spoofing is off. [any-thread] */
    bool (*current)(void *context, pincer_location_fix_t *fix);

    /* Spoofs a fixed position (persisted; stops a route being played).
     * PINCER_INVALID_ARGUMENT for a latitude outside -90...90 or a longitude
     * outside -180...180 (details: last_error). [any-thread] */
    pincer_status_t (*set)(void *context, double latitude, double longitude);

    /* Spoofs the named place: a preset id ("paris") or a place added with
     * loc.add. PINCER_NOT_FOUND when there is no such place. [any-thread] */
    pincer_status_t (*set_place)(void *context, const char *id);

    /* Plays a route (a scenario or an imported route) from its start at
     * `rate` times real time (1 for real time; must be > 0), in a loop when
     * `loop` is true. PINCER_NOT_FOUND for an unknown route,
     * PINCER_INVALID_ARGUMENT for a bad rate. [any-thread] */
    pincer_status_t (*play)(void *context, const char *route, double rate, bool loop);

    /* Stops a route being played; the last fix stays current. [any-thread] */
    pincer_status_t (*stop)(void *context);

    /* Switches spoofing off (persisted). [any-thread] */
    pincer_status_t (*off)(void *context);

    /* Calls fn(fn_context, fix) for every new fix until unsubscribe. Returns
     * a token (never 0), or 0 when fn is NULL. fn_context must stay valid
     * until unsubscribe returns. [any-thread] */
    uint64_t (*subscribe)(void *context, pincer_location_fix_fn_t fn, void *fn_context);
    void (*unsubscribe)(void *context, uint64_t token);

    /* Why this thread's most recent failing call into this service failed.
     * Owned by the service; valid until this thread's next call into it.
     * Never NULL. [any-thread] */
    const char *(*last_error)(void *context);
} pincer_location_service_t;

/* Changes are also emitted as the host event "location.changed" with a JSON
 * payload {"spoofing": bool, "latitude": n, "longitude": n, "source":
 * "preset" | "custom" | "route" | "off", "name": "..."}. */
#define PINCER_LOCATION_CHANGED_EVENT "location.changed"

#ifdef __cplusplus
}
#endif

#endif /* PINCER_LOCATION_H */
