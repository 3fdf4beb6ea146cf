// `--data` directories (nasa::data::load_data, docs/data.md): the input's first part becomes one
// file of a dataset directory, the second part's first byte picks which: a CIFAR-10 batch, a
// CIFAR-100 train.bin, or an image (PNG, JPEG) in a class folder. Bad input must be a
// std::runtime_error naming that file; a dataset that loads must hold count x rows x cols x
// channels values, one label per image, each label inside the format's classes.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "fuzz_common.h"
#include "nasa/data.h"

namespace data = nasa::data;
namespace fs = std::filesystem;
using nasa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  // one directory per process, removed when it exits
  static const struct Root {
    fs::path path = fs::temp_directory_path() / ("fuzz-data-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  const fs::path& root = dir.path;
  const auto parts = nasa::fuzz::split(bytes, size, 2);
  const int kind = parts[1].empty() ? 0 : parts[1][0] % 4;
  fs::remove_all(root);
  const fs::path file = kind == 0   ? root / "data_batch_1.bin"
                        : kind == 1 ? root / "train.bin"
                        : kind == 2 ? root / "k" / "x.png"
                                    : root / "k" / "x.jpg";
  fs::create_directories(file.parent_path());
  {
    std::ofstream f(file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(parts[0].data()),
            static_cast<std::streamsize>(parts[0].size()));
  }
  std::optional<data::Data> d;
  if (!nasa::fuzz::accepts<std::runtime_error>("fuzz-data-", [&] { d = data::load_data(root); })) {
    return 0;
  }
  const uint32_t classes = kind == 0 ? 10 : kind == 1 ? 100 : 1;
  for (const data::Dataset* s : {&d->train, &d->test}) {
    check(s->images.size() == s->size() * s->rows * s->cols * s->channels, "value count");
    for (const uint8_t l : s->labels) check(l < classes, "label past the classes");
  }
  check(d->train.size() > 0, "empty training split accepted");
  check(kind < 2 || (d->train.channels == 1 || d->train.channels == 3), "image channels");
  return 0;
}
