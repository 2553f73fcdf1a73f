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

// `v` written back as JSON (members in their order).
inline std::string to_json(const simclock::json::Value& v) {
    using simclock::json::Value;
    std::vector<std::string> parts;
    switch (v.kind) {
        case Value::Null: return "null";
        case Value::Bool: return v.boolean ? "true" : "false";
        case Value::Number: return v.text;
        case Value::String: return simclock::json::quote(v.text);
        case Value::Array:
            for (const Value& item : v.items) parts.push_back(to_json(item));
            return simclock::json::array(parts);
        case Value::Object:
            for (const auto& [key, value] : v.members) parts.push_back(simclock::json::quote(key) + ":" + to_json(value));
            return "{" + simclock::json::array(parts).substr(1, simclock::json::array(parts).size() - 2) + "}";
    }
    return "";
}

}  // namespace simclock_test

#endif
