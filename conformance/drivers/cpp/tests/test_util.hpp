// Helpers shared by the kit's unit tests.
#ifndef SIMCLOCK_TEST_UTIL_HPP
#define SIMCLOCK_TEST_UTIL_HPP

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <simclock/driver.hpp>

namespace simclock_test {

// A decimal string as a 128-bit integer (the test data are well-formed).
inline simclock::ns_t u128(const std::string& digits) {
    simclock::ns_t r = 0;
    for (char c : digits) r = r * 10 + static_cast<simclock::ns_t>(c - '0');
    return r;
}

// The golden-vector file `name`, read from the repository by its path relative to this
// kit's folder (ctest runs the tests there); $SIMCLOCK_VECTORS_DIR overrides it.
inline std::vector<simclock::json::Value> vector_cases(const std::string& name) {
    const char* dir = std::getenv("SIMCLOCK_VECTORS_DIR");
    std::string path = std::string(dir ? dir : "../../simclock_conformance/vectors/v1") + "/" + name;
    std::ifstream in(path);
    std::vector<simclock::json::Value> cases;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) cases.push_back(simclock::json::Parser(line).document());
    return cases;
}

}  // namespace simclock_test

#endif
