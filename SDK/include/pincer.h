/*
 * pincer.h — everything a Pincer plugin needs. Include this one header.
 *
 *   pincer/version.h  ABI version, magic, status codes, PINCER_EXPORT
 *   pincer/call.h     the reply handle: fail, return_string, add_row
 *   pincer/command.h  typed commands and their signature grammar
 *   pincer/menu.h     sections and entries
 *   pincer/host.h     the host API table passed to init
 *   pincer/service.h  conventions for service tables
 *   pincer/entry.h    the exported entry function and plugin record
 *
 * Service tables of the built-in plugins (include them as needed):
 *   pincer/flags.h    feature flags, "pincer.flags/1"
 *   pincer/servers.h  server environments, "pincer.servers/1"
 *   pincer/network.h  network log recording, "pincer.network/1"
 *   pincer/l10n.h     pseudo-localisation, "pincer.l10n/1"
 *   pincer/location.h location spoofing and routes, "pincer.location/1"
 *   pincer/database.h database adapters and the browser, "pincer.database/1"
 *
 * For applications that embed Pincer (not for plugins):
 *   pincer/embed.h    start and stop Pincer in an app, look services up
 *                     (libpincer-embed.so)
 */
#ifndef PINCER_H
#define PINCER_H

#include "pincer/version.h"
#include "pincer/call.h"
#include "pincer/command.h"
#include "pincer/menu.h"
#include "pincer/host.h"
#include "pincer/service.h"
#include "pincer/entry.h"

#endif /* PINCER_H */
