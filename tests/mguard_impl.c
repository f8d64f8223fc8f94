/* The one translation unit of the test suite that holds the implementation. */
#define STB_DS_IMPLEMENTATION
#define MGUARD_IMPLEMENTATION
#include "mguard.h"
#include "introspect.h"
