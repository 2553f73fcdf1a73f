// The reference heap clock as a wire-protocol driver (SPEC §18).
//
//     g++ -std=c++17 -O2 -Iinclude -o heap_clock examples/heap_clock.cpp
//     python -m simclock_conformance --driver -- ./heap_clock
//
// Besides the clock's own faults (examples/heap_clock.hpp), two of the kit's can be
// switched on for testing the suite: BROKEN_NUMBER_TIMES (a time sent as a JSON number
// is accepted) and BROKEN_BITS (spawn-key words read little-endian).
#ifdef BROKEN_NUMBER_TIMES
#define SIMCLOCK_KIT_BROKEN_NUMBER_TIMES 1
#endif
#ifdef BROKEN_BITS
#define SIMCLOCK_KIT_BROKEN_BITS 1
#endif

#include "heap_clock.hpp"

int main() {
    std::string backend = "simclock-cpp-heap";
#ifdef BROKEN_VARIANT_NAME
    backend += "+" BROKEN_VARIANT_NAME;
#endif
    return simclock::serve<HeapClock>(backend);
}
