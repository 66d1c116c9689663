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
