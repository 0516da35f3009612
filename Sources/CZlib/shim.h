/* zlib for IsletSnapshot's PNG codec. Only IsletSnapshot imports this module. */
#ifndef ISLET_CZLIB_SHIM_H
#define ISLET_CZLIB_SHIM_H

#include <zlib.h>

#endif
