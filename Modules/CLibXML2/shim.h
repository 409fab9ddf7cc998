// libxml2, as CastStyleConfig sees it.
// `xmlFree` is a mutable global function pointer, which Swift 6 rejects as not concurrency-safe;
// it is wrapped as CLibXML2_free.
#ifndef CLIBXML2_SHIM_H
#define CLIBXML2_SHIM_H

// Debian builds libxml2 with ICU, whose headers then clash with the ICU copy inside Foundation
// ("'UErrorCode' has different definitions") in any module that sees both. We never use libxml2's ICU
// converter structures, so the headers are read without ICU.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

static inline void CLibXML2_free(void *pointer) {
    xmlFree(pointer);
}

#endif
