// libavahi-client, as CastDiscovery sees it.
// Avahi's AVAHI_IF_UNSPEC / AVAHI_PROTO_UNSPEC are anonymous-enum constants that Swift imports as Int,
// which does not type-check against AvahiIfIndex / AvahiProtocol; typed copies live here.
#ifndef CAVAHI_SHIM_H
#define CAVAHI_SHIM_H

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

#endif
