// libmosquitto (the Eclipse Mosquitto client library), as CastService's MQTT client sees it.
#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#endif
