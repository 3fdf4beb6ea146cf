#include "nasa/backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "nasa/names.h"
#include "nasa/uart_device.h"

namespace nasa::device {

std::unique_ptr<Device> make_engine_ref_device(const hw::Config& cfg, uint64_t memory_bytes);

namespace {

struct Registry {
  std::mutex mu;
  std::vector<Backend> backends;
};

// The backends of this library (the engine's reference model and the board link) are always
// there; others (rtl, the board's model) add themselves when their libraries are linked.
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: registrars of other libraries may run late
    reg->backends.push_back(
        {"ref", "the bit-exact reference model with the engine's cycle model",
         [](const hw::Config& c) { return c.mcu == 0; },
         [](const hw::Config& c, uint64_t m, const BackendOptions&) {
           return make_engine_ref_device(c, m);
         }});
    reg->backends.push_back(
        {"uart", "the iCEBreaker board over its serial port (--port)",
         [](const hw::Config&) { return true; },
         [](const hw::Config& c, uint64_t m, const BackendOptions& o) {
           if (o.port.empty()) throw std::invalid_argument("--backend uart needs --port PATH");
           return uart::make_uart_device(o.port, c, m);
         }});
    return reg;
  }();
  return *r;
}

}  // namespace

void register_backend(Backend b) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.backends.push_back(std::move(b));
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (const Backend& b : r.backends) names.push_back(b.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::unique_ptr<Device> make_device(std::string_view name, const hw::Config& cfg,
                                    uint64_t memory_bytes, const BackendOptions& opt) {
  std::function<std::unique_ptr<Device>(const hw::Config&, uint64_t, const BackendOptions&)> make;
  bool named = false;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (const Backend& b : r.backends) {
      if (b.name != name) continue;
      named = true;
      if (b.supports(cfg)) {
        make = b.make;  // (a copy: the list may grow once the lock is released)
        break;
      }
    }
  }
  if (!named) {
    throw std::invalid_argument(fmt::format("backend '{}': this build has {}", name,
                                            fmt::join(backend_names(), ", ")));
  }
  if (!make) {
    throw std::invalid_argument(fmt::format(
        "backend '{}' has no model of configuration '{}' in this build{}", name, cfg.name,
        cfg.mcu ? ": the board's cycle-exact model is the nasa_board library (fpga/model/), "
                  "built with the RISC-V firmware"
                : ""));
  }
  return make(cfg, memory_bytes, opt);
}

Factory backend_factory(std::string_view name, BackendOptions opt) {
  const auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw std::invalid_argument(
        fmt::format("--backend '{}'{}: expected one of {}", name,
                    did_you_mean(name, names),
                    fmt::join(names, ", ")));
  }
  return [n = std::string(name), opt = std::move(opt)](const hw::Config& c, uint64_t m) {
    return make_device(n, c, m, opt);
  };
}

}  // namespace nasa::device
