// simclock driver kit: the errors a clock throws and the wire reports (C-WIRE-5).
#ifndef SIMCLOCK_ERRORS_HPP
#define SIMCLOCK_ERRORS_HPP

#include <stdexcept>
#include <string>

namespace simclock {

/// A refused call (C-WIRE-5); a refusal changes nothing. `kind()` is the error's own name:
/// `TypeError`, `ValueError`, `RuntimeError`, or a kind of the adapter's own (say
/// `Refusal("Deadlock", "...")`), which the wire reports as `internal`. The reply's message
/// is `"KIND: message"` (docs/kits.md, "What a kit reports").
class Refusal : public std::runtime_error {
   public:
    Refusal(std::string kind, const std::string& message)
        : std::runtime_error(message), kind_(std::move(kind)) {}
    const std::string& kind() const noexcept { return kind_; }
    /// True for the kit's own refusals of a malformed request: their message is the text alone.
    virtual bool from_kit() const noexcept { return false; }

   private:
    std::string kind_;
};

/// A value of the wrong type, such as a time that is not an integer (C-TIME-3).
class TypeError : public Refusal {
   public:
    explicit TypeError(const std::string& m) : Refusal("TypeError", m) {}
};

/// A value out of range: a time in the past (C-SCH-1), beyond what the clock keeps
/// (C-TIME-4), a period of 0, a malformed random-stream label (C-RNG-3).
class ValueError : public Refusal {
   public:
    explicit ValueError(const std::string& m) : Refusal("ValueError", m) {}
};

/// A call the clock's state forbids, such as an advance from inside a callback (C-ADV-4).
class RuntimeError : public Refusal {
   public:
    explicit RuntimeError(const std::string& m) : Refusal("RuntimeError", m) {}
};

/// What a callback throws for the wire's `raise` action: an ordinary error, a
/// RuntimeError, which the clock isolates (C-ERR-1).
class CallbackError : public RuntimeError {
   public:
    using RuntimeError::RuntimeError;
};

/// What a callback throws for the wire's `halt` action (C-ERR-2). Deliberately NOT a
/// std::exception: it is C++'s counterpart of Python's BaseException, which a clock's
/// `catch (const std::exception&)` lets through. A clock must not swallow it.
struct Halt {
    std::string entry;
    unsigned __int128 at_ns;
};

}  // namespace simclock

#endif
