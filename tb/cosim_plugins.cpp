// RTL models on demand (docs/cosim.md "Models on demand"): every configuration but the built-in
// one is a plugin, lib/nasa/nasa-rtl-<cfg>.so, that EngineSim::create loads the first time a
// program asks for it. A plugin that is missing, is not a shared object, or holds another
// configuration is an error that names the file and the command that builds it, never a crash.
// (The refusals come first: a plugin once loaded stays loaded for the process, and the X-seed
// runs run this file's tests in one process.)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "nasa/cycle_model.h"
#include "nasa/desc.h"
#include "nasa/hw_spec.h"
#include "nasa/sim/engine_sim.h"

namespace nasa {
namespace {

namespace fs = std::filesystem;

// A directory of (fake) plugins the loader is told to use alone, for one test.
class PluginDir {
 public:
  PluginDir() : dir_(fs::temp_directory_path() / fmt::format("nasa-plugins-{}", getpid())) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("NASA_RTL_PLUGIN_DIR", dir_.c_str(), 1);
  }
  ~PluginDir() {
    unsetenv("NASA_RTL_PLUGIN_DIR");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

std::string create_error(std::string_view config_name) {
  try {
    sim::EngineSim::create(config_by_name(config_name), 1 << 16,
                           cycles::default_dram(config_by_name(config_name)));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(EnginePlugins, MissingPluginNamesTheTargetThatBuildsIt) {
  PluginDir dir;
  const std::string what = create_error("large");
  EXPECT_NE(what.find("config 'large' is not built"), std::string::npos) << what;
  EXPECT_NE(what.find((dir.path() / "nasa-rtl-large.so").string()), std::string::npos) << what;
  EXPECT_NE(what.find("--target nasa-rtl-large"), std::string::npos) << what;
}

TEST(EnginePlugins, FileThatIsNoSharedObjectIsRefused) {
  PluginDir dir;
  std::ofstream(dir.path() / "nasa-rtl-up5k.so") << "not an ELF file\n";
  const std::string what = create_error("up5k");
  EXPECT_NE(what.find("cannot load the Verilated model of config 'up5k'"), std::string::npos)
      << what;
}

TEST(EnginePlugins, PluginOfAnotherConfigurationIsRefused) {
  PluginDir dir;
  fs::copy_file(fs::path(NASA_RTL_PLUGIN_BUILD_DIR) / "nasa-rtl-fpga.so",
                dir.path() / "nasa-rtl-large.so");
  const std::string what = create_error("large");
  EXPECT_NE(what.find("holds config 'fpga', not 'large'"), std::string::npos) << what;
  EXPECT_NE(what.find("--target nasa-rtl-large"), std::string::npos) << what;
}

TEST(EnginePlugins, UnknownConfigurationIsRefused) {
  hw::Config c = config_by_name("sim");
  c.name = "nosuch";
  EXPECT_THROW(sim::EngineSim::create(c, 1 << 16, cycles::default_dram(config_by_name("sim"))),
               std::invalid_argument);
}

// Every configuration loads (from the build tree) and is the one asked for: its identification
// CSRs match the configuration (VerilatedEngine checks them when it is built), and it runs.
TEST(EnginePlugins, EveryConfigurationLoadsOnDemand) {
  for (const hw::Config& c : hw::kConfigs) {
    SCOPED_TRACE(std::string(c.name));
    auto e = sim::EngineSim::create(c, 1 << 16, cycles::default_dram(c));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->config().name, c.name);
    EXPECT_EQ(e->csr_read(static_cast<uint32_t>(hw::Csr::Magic)), hw::kMagic);
    const uint64_t before = e->cycle();
    e->tick();
    EXPECT_EQ(e->cycle(), before + 1);
  }
}

}  // namespace
}  // namespace nasa
