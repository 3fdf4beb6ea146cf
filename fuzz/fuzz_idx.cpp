// Datasets in the IDX format (`nasa eval --data/--labels`, Fashion-MNIST), plain or gzipped: two
// files framed as one input (fuzz_common.h split()) -> parse_idx. Bad input must be a
// std::runtime_error naming the file at fault; a dataset that loads must hold exactly
// count x rows x cols x channels values and one label per image.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "fuzz_common.h"
#include "nasa/data.h"

namespace data = nasa::data;
using nasa::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const auto parts = nasa::fuzz::split(bytes, size, 2);
  std::optional<data::Dataset> d;
  // "fuzz-" is in both names: every message names one of the two files.
  if (!nasa::fuzz::accepts<std::runtime_error>("fuzz-", [&] {
        d = data::parse_idx(parts[0], parts[1], 0, "fuzz-images", "fuzz-labels");
      })) {
    return 0;
  }
  check(d->rows > 0 && d->cols > 0 && d->channels > 0 && d->size() > 0, "empty dataset accepted");
  const size_t per_image = size_t{d->rows} * d->cols * d->channels;
  check(d->images.size() == d->size() * per_image, "value count");
  const auto all = d->byte_images(0, d->size());
  check(all.back().size() == per_image, "last image size");
  check(d->label_range(0, d->size()) == d->labels, "label_range");
  // The limit keeps a prefix.
  const data::Dataset first = data::parse_idx(parts[0], parts[1], 1);
  check(first.size() == 1 && first.labels[0] == d->labels[0], "limit 1");
  return 0;
}
