// simclock driver kit: the JSON the wire protocol uses (C-WIRE-1), no dependency.
//
// A number keeps its literal text: the protocol refuses JSON numbers where it wants
// integers (C-WIRE-2), and the refusal quotes what was sent.
#ifndef SIMCLOCK_JSON_HPP
#define SIMCLOCK_JSON_HPP

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace simclock::json {

struct Value {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    std::string text;  // a String's decoded UTF-8, or a Number's literal text
    std::vector<Value> items;
    std::vector<std::pair<std::string, Value>> members;

    /// The member `key` of an object, or nullptr (the first one if a key repeats).
    const Value* get(const char* key) const {
        for (const auto& m : members)
            if (m.first == key) return &m.second;
        return nullptr;
    }
};

struct ParseError {
    std::string message;
};

/// Parses one JSON document (RFC 8259); throws ParseError with the offset.
class Parser {
   public:
    explicit Parser(const std::string& s) : s_(s) {}

    Value document() {
        Value v = value(0);
        ws();
        if (i_ != s_.size()) fail("trailing characters after the JSON value");
        return v;
    }

   private:
    const std::string& s_;
    std::size_t i_ = 0;

    [[noreturn]] void fail(const std::string& why) {
        throw ParseError{why + " at offset " + std::to_string(i_)};
    }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool digit() const { return i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])); }
    void digits() {
        if (!digit()) fail("invalid number");
        while (digit()) ++i_;
    }
    void literal(const char* word) {
        std::size_t n = std::strlen(word);
        if (s_.compare(i_, n, word) != 0) fail("invalid literal");
        i_ += n;
    }
    Value value(int depth) {
        if (depth > 512) fail("nesting deeper than 512");
        ws();
        if (i_ >= s_.size()) fail("unexpected end of input");
        Value v;
        char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.kind = Value::Object;
            if (eat('}')) return v;
            do {
                ws();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key");
                std::string key = string();
                if (!eat(':')) fail("expected ':'");
                v.members.emplace_back(std::move(key), value(depth + 1));
            } while (eat(','));
            if (!eat('}')) fail("expected ',' or '}'");
        } else if (c == '[') {
            ++i_;
            v.kind = Value::Array;
            if (eat(']')) return v;
            do {
                v.items.push_back(value(depth + 1));
            } while (eat(','));
            if (!eat(']')) fail("expected ',' or ']'");
        } else if (c == '"') {
            v.kind = Value::String;
            v.text = string();
        } else if (c == 't') {
            literal("true");
            v.kind = Value::Bool;
            v.boolean = true;
        } else if (c == 'f') {
            literal("false");
            v.kind = Value::Bool;
        } else if (c == 'n') {
            literal("null");
        } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            v.kind = Value::Number;
            std::size_t start = i_;
            if (s_[i_] == '-') ++i_;
            digits();
            if (i_ < s_.size() && s_[i_] == '.') {
                ++i_;
                digits();
            }
            if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
                ++i_;
                if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
                digits();
            }
            v.text = s_.substr(start, i_ - start);
        } else {
            fail("unexpected character");
        }
        return v;
    }
    static void put_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
    std::uint32_t hex4() {
        if (i_ + 4 > s_.size()) fail("truncated \\u escape");
        std::uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= static_cast<std::uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f') v |= static_cast<std::uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= static_cast<std::uint32_t>(h - 'A' + 10);
            else fail("invalid \\u escape");
        }
        return v;
    }
    std::string string() {
        ++i_;  // the opening quote
        std::string out;
        while (true) {
            if (i_ >= s_.size()) fail("unterminated string");
            unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') break;
            if (c < 0x20) fail("control character in string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            switch (s_[i_++]) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && i_ + 6 <= s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u') {
                        std::size_t save = i_;
                        i_ += 2;
                        std::uint32_t lo = hex4();
                        if (lo >= 0xDC00 && lo < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else {
                            i_ = save;
                            cp = 0xFFFD;
                        }
                    } else if (cp >= 0xD800 && cp < 0xE000) {
                        cp = 0xFFFD;  // a lone surrogate has no UTF-8 form
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: fail("invalid escape");
            }
        }
        return out;
    }
};

/// `v` as a JSON string literal.
inline std::string quote(const std::string& v) {
    std::string s = "\"";
    for (char ch : v) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '"') s += "\\\"";
        else if (c == '\\') s += "\\\\";
        else if (c == '\n') s += "\\n";  // the short escapes, as Python's json writes them
        else if (c == '\r') s += "\\r";
        else if (c == '\t') s += "\\t";
        else if (c == '\b') s += "\\b";
        else if (c == '\f') s += "\\f";
        else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            s += buf;
        } else s += static_cast<char>(c);
    }
    return s + '"';
}

/// A JSON object written member by member, in the order given.
class Object {
   public:
    Object& raw(const char* key, const std::string& json) {
        s_ += s_.size() > 1 ? "," : "";
        s_ += quote(key) + ':' + json;
        return *this;
    }
    Object& str(const char* key, const std::string& value) { return raw(key, quote(value)); }
    Object& boolean(const char* key, bool value) { return raw(key, value ? "true" : "false"); }
    std::string done() const { return s_ + "}"; }

   private:
    std::string s_ = "{";
};

/// A JSON array of already-encoded items.
inline std::string array(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
    return s + "]";
}

/// How a received value is quoted in an error message.
inline std::string show(const Value* v) {
    if (!v) return "nothing";
    switch (v->kind) {
        case Value::Null: return "null";
        case Value::Bool: return v->boolean ? "true" : "false";
        case Value::Number: return "the JSON number " + v->text.substr(0, 60);
        case Value::String: return "the string " + quote(v->text.substr(0, 60));
        case Value::Array: return "an array";
        case Value::Object: return "an object";
    }
    return "?";
}

}  // namespace simclock::json

#endif
