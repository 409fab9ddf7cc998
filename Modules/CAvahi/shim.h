// libavahi-client, as CastDiscovery sees it.
// Avahi's AVAHI_IF_UNSPEC / AVAHI_PROTO_UNSPEC / AVAHI_ERR_* are anonymous-enum constants that Swift imports as
// Int, which does not type-check against AvahiIfIndex / AvahiProtocol / the int error codes; typed copies live here.
#ifndef CAVAHI_SHIM_H
#define CAVAHI_SHIM_H

#include <net/if.h>

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>

static const AvahiIfIndex CAvahi_IF_UNSPEC = AVAHI_IF_UNSPEC;
static const AvahiProtocol CAvahi_PROTO_UNSPEC = AVAHI_PROTO_UNSPEC;
static const AvahiProtocol CAvahi_PROTO_INET = AVAHI_PROTO_INET;
static const AvahiProtocol CAvahi_PROTO_INET6 = AVAHI_PROTO_INET6;

static const int CAvahi_OK = AVAHI_OK;
static const int CAvahi_ERR_COLLISION = AVAHI_ERR_COLLISION;
static const int CAvahi_ERR_DBUS_ERROR = AVAHI_ERR_DBUS_ERROR;
static const int CAvahi_ERR_DISCONNECTED = AVAHI_ERR_DISCONNECTED;
static const int CAvahi_ERR_NO_DAEMON = AVAHI_ERR_NO_DAEMON;
static const int CAvahi_ERR_TIMEOUT = AVAHI_ERR_TIMEOUT;

/// Room for any address avahi_address_snprint writes, terminator included.
static const size_t CAvahi_ADDRESS_STR_MAX = AVAHI_ADDRESS_STR_MAX;
/// Room for an interface name, terminator included.
static const size_t CAvahi_IF_NAMESIZE = IF_NAMESIZE;

#endif
