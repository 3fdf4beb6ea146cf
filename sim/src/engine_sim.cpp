#include "nasa/sim/engine_sim.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/desc.h"
#include "nasa_rtl_abi.h"
#include "rtl_plugin.h"

namespace nasa::sim {
namespace detail {
// The configuration linked into nasa_sim (engine_model.cpp built with NASA_RTL_BUILTIN).
std::unique_ptr<EngineSim> make_builtin_engine(const hw::Config& cfg, size_t memory_bytes,
                                               const cycles::DramTiming& dram);

namespace {

namespace fs = std::filesystem;

// Where a plugin nasa-rtl-<cfg>.so may be: $NASA_RTL_PLUGIN_DIR when set (only there); else next
// to the program (<bin>/../lib/nasa, the installed layout and the build tree's bin/ and lib/nasa/),
// then the build tree this program was built in (test programs live elsewhere in it).
std::vector<fs::path> plugin_dirs() {
  std::vector<fs::path> dirs;
  if (const char* d = std::getenv("NASA_RTL_PLUGIN_DIR"); d != nullptr && *d != '\0') {
    dirs.emplace_back(d);
    return dirs;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "lib" / "nasa").lexically_normal());
  const fs::path build_dir = fs::path(NASA_RTL_PLUGIN_BUILD_DIR).lexically_normal();
  if (std::find(dirs.begin(), dirs.end(), build_dir) == dirs.end()) dirs.push_back(build_dir);
  return dirs;
}

// Loads nasa-rtl-<name>.so once per process (never unloaded: its engines may live to the end).
const RtlPlugin& load_plugin(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, const RtlPlugin*> loaded;
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = loaded.find(name); it != loaded.end()) return *it->second;
  const std::string file = fmt::format("nasa-rtl-{}.so", name);
  std::string tried;
  for (const fs::path& dir : plugin_dirs()) {
    const fs::path path = dir / file;
    tried += fmt::format("\n  {}", path.string());
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* err = dlerror();
      throw std::runtime_error(
          fmt::format("EngineSim: cannot load the Verilated model of config "
                      "'{}' from {}: {}",
                      name, path.string(), err ? err : "unknown error"));
    }
    auto entry = reinterpret_cast<NasaRtlPluginFn>(dlsym(h, "nasa_rtl_plugin"));
    const RtlPlugin* p = entry != nullptr ? entry() : nullptr;
    if (p == nullptr) {
      dlclose(h);
      throw std::runtime_error(fmt::format(
          "EngineSim: {} is not a NASA RTL model plugin (no nasa_rtl_plugin)", path.string()));
    }
    if (std::string(p->config) != name || std::string(p->abi) != NASA_RTL_ABI) {
      const std::string what =
          std::string(p->config) != name
              ? fmt::format("holds config '{}', not '{}'", p->config, name)
              : fmt::format("was built from other sources than this program (ABI {} vs {})", p->abi,
                            NASA_RTL_ABI);
      dlclose(h);
      throw std::runtime_error(fmt::format(
          "EngineSim: the Verilated model {} {}: rebuild it (cmake --build <build> --target "
          "nasa-rtl-{}, or `make build`)",
          path.string(), what, name));
    }
    loaded.emplace(name, p);
    return *p;
  }
  throw std::runtime_error(fmt::format(
      "EngineSim: the Verilated model of config '{}' is not built (it is loaded on demand from "
      "{}; looked in:{}); build it with `cmake --build <build> --target nasa-rtl-{}` or `make "
      "build` (`make run` builds only the built-in config '{}')",
      name, file, tried, name, NASA_RTL_BUILTIN_CONFIG));
}

}  // namespace
}  // namespace detail

std::unique_ptr<EngineSim> EngineSim::create(const hw::Config& cfg, size_t memory_bytes,
                                             const cycles::DramTiming& dram) {
  if (cfg.name == NASA_RTL_BUILTIN_CONFIG) {
    return detail::make_builtin_engine(cfg, memory_bytes, dram);
  }
  config_by_name(cfg.name);  // (throws std::invalid_argument for a name hw::kConfigs lacks)
  return std::unique_ptr<EngineSim>(
      detail::load_plugin(std::string(cfg.name)).make(cfg, memory_bytes, dram));
}

}  // namespace nasa::sim
