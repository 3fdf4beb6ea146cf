// The targets a runtime can drive, by name: each backend (ref, rtl, uart, ...) registers a
// factory for the configurations it models, so the CLI and the library pick one by name and
// never include a backend's own headers (the Verilated RTL lives in sim/, the board's model in
// fpga/model/). A device carries its target's own cycle model: `ref` of an engine configuration
// is the reference model with the engine's cycle model, `ref` of the board's configuration (Mcu)
// is the board's cycle-exact model (registered by the board library).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nasa/device.h"

namespace nasa::device {

// What some backends need beyond the configuration (the uart backend: its serial port).
struct BackendOptions {
  std::string port;
};

using Factory =
    std::function<std::unique_ptr<Device>(const hw::Config& cfg, uint64_t memory_bytes)>;

struct Backend {
  std::string name;     // "ref", "rtl", "uart"
  std::string summary;  // one line for --help and error messages
  // Whether this backend models `cfg` (a name may have one backend per kind of configuration).
  std::function<bool(const hw::Config&)> supports;
  std::function<std::unique_ptr<Device>(const hw::Config&, uint64_t, const BackendOptions&)> make;
};

// Adds a backend; a second one with the same name must support other configurations.
void register_backend(Backend b);

// Registers a backend when its library is loaded (a static object in the backend's own file;
// link that library whole, e.g. CMake's $<LINK_LIBRARY:WHOLE_ARCHIVE,...>).
struct BackendRegistrar {
  explicit BackendRegistrar(Backend b) { register_backend(std::move(b)); }
};

// The registered backend names, sorted and without repeats.
std::vector<std::string> backend_names();

// A factory of backend `name` for any configuration it supports. Throws std::invalid_argument
// naming the backends this build has when `name` is unknown.
Factory backend_factory(std::string_view name, BackendOptions opt = {});

// One device of backend `name` for `cfg`. Throws std::invalid_argument when no backend of that
// name models `cfg` (saying which library would).
std::unique_ptr<Device> make_device(std::string_view name, const hw::Config& cfg,
                                    uint64_t memory_bytes, const BackendOptions& opt = {});

}  // namespace nasa::device
