// `--data` directories (docs/data.md): the layout is recognized by the files present, each format
// read into its training and test splits with every malformed input named (file, record, image).
#include <fmt/format.h>
#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "nasa/data.h"

namespace nasa::data {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& path, std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", path.string(), what));
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}
bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// `name` or `name`.gz, whichever exists (empty when neither does).
fs::path plain_or_gz(const fs::path& dir, const std::string& name) {
  if (is_file(dir / name)) return dir / name;
  if (is_file(dir / (name + ".gz"))) return dir / (name + ".gz");
  return {};
}

// Non-empty lines of a text file (class names), or nothing when it does not exist.
std::vector<std::string> lines_of(const fs::path& path) {
  std::vector<std::string> out;
  if (!is_file(path)) return out;
  const std::vector<uint8_t> bytes = read_file(path);
  std::string line;
  for (const uint8_t b : bytes) {
    if (b == '\n' || b == '\r') {
      if (!line.empty()) out.push_back(line);
      line.clear();
    } else {
      line.push_back(static_cast<char>(b));
    }
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

// ---------------------------------------------------------------- CIFAR
constexpr uint32_t kCifarSide = 32, kCifarPixels = kCifarSide * kCifarSide;

// Appends the records of one CIFAR batch file: `label_bytes` label bytes (the last is the class),
// then 3 x 32 x 32 channel-major bytes, stored here as HWC.
void read_cifar_batch(const fs::path& path, uint32_t label_bytes, uint32_t classes, Dataset& d) {
  const std::vector<uint8_t> bytes = read_file(path);
  const size_t record = label_bytes + 3 * kCifarPixels;
  if (bytes.empty() || bytes.size() % record != 0) {
    fail(path, fmt::format("truncated CIFAR batch: {} bytes is not a whole number of {}-byte "
                           "records ({} whole, {} bytes left over)",
                           bytes.size(), record, bytes.size() / record, bytes.size() % record));
  }
  const size_t n = bytes.size() / record;
  const size_t at = d.labels.size();
  d.labels.resize(at + n);
  d.images.resize((at + n) * 3 * kCifarPixels);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* r = bytes.data() + i * record;
    const uint8_t label = r[label_bytes - 1];
    if (label >= classes) {
      fail(path,
           fmt::format("record {}: label {} is past the format's {} classes", i, label, classes));
    }
    d.labels[at + i] = label;
    uint8_t* out = d.images.data() + (at + i) * 3 * kCifarPixels;
    for (uint32_t p = 0; p < kCifarPixels; ++p) {
      for (uint32_t c = 0; c < 3; ++c) out[p * 3 + c] = r[label_bytes + c * kCifarPixels + p];
    }
  }
}

Data load_cifar(const fs::path& dir, bool hundred) {
  Data data;
  data.format = hundred ? "cifar100" : "cifar10";
  for (Dataset* d : {&data.train, &data.test}) {
    d->rows = d->cols = kCifarSide;
    d->channels = 3;
  }
  const uint32_t label_bytes = hundred ? 2 : 1, classes = hundred ? 100 : 10;
  if (hundred) {
    read_cifar_batch(dir / "train.bin", label_bytes, classes, data.train);
    if (is_file(dir / "test.bin"))
      read_cifar_batch(dir / "test.bin", label_bytes, classes, data.test);
    data.class_names = lines_of(dir / "fine_label_names.txt");
  } else {
    for (int b = 1; is_file(dir / fmt::format("data_batch_{}.bin", b)); ++b) {
      read_cifar_batch(dir / fmt::format("data_batch_{}.bin", b), label_bytes, classes, data.train);
    }
    if (is_file(dir / "test_batch.bin")) {
      read_cifar_batch(dir / "test_batch.bin", label_bytes, classes, data.test);
    }
    data.class_names = lines_of(dir / "batches.meta.txt");
  }
  if (!data.class_names.empty() && data.class_names.size() != classes) {
    data.class_names.clear();  // (a names file of another length names nothing reliably)
  }
  return data;
}

// ---------------------------------------------------------------- images
struct Image {
  uint32_t h = 0, w = 0, c = 0;
  std::vector<uint8_t> hwc;
};

Image decode_png(const fs::path& path, const std::vector<uint8_t>& bytes) {
  png_image im{};
  im.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&im, bytes.data(), bytes.size()) == 0) {
    const std::string msg = im.message;
    png_image_free(&im);
    fail(path, fmt::format("unreadable PNG: {}", msg));
  }
  // gray stays gray, color becomes RGB; alpha is composited on black (background NULL: the
  // simplified API's default for a format without alpha)
  const bool color = (im.format & PNG_FORMAT_FLAG_COLOR) != 0;
  im.format = color ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  Image out;
  out.h = im.height;
  out.w = im.width;
  out.c = color ? 3 : 1;
  out.hwc.resize(PNG_IMAGE_SIZE(im));
  png_color black{0, 0, 0};
  if (png_image_finish_read(&im, &black, out.hwc.data(), 0, nullptr) == 0) {
    const std::string msg = im.message;
    png_image_free(&im);
    fail(path, fmt::format("unreadable PNG: {}", msg));
  }
  return out;
}

// libjpeg reports errors through error_exit, which must not return: it jumps back here (no C++
// object with a destructor lives between the setjmp and the longjmp).
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};
void jpeg_fail(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}
void jpeg_quiet(j_common_ptr /*cinfo*/, int /*level*/) {}

// Decodes into `out` (sized by the caller after the header): false with `err.message` set on an
// error.
bool jpeg_decode(const std::vector<uint8_t>& bytes, JpegError& err, jpeg_decompress_struct& cinfo,
                 Image& out) {
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.h = cinfo.output_height;
  out.w = cinfo.output_width;
  out.c = static_cast<uint32_t>(cinfo.output_components);
  out.hwc.resize(size_t{out.h} * out.w * out.c);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.hwc.data() + size_t{cinfo.output_scanline} * out.w * out.c;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

Image decode_jpeg(const fs::path& path, const std::vector<uint8_t>& bytes) {
  JpegError err{};
  jpeg_decompress_struct cinfo{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_fail;
  err.mgr.emit_message = jpeg_quiet;
  Image out;
  if (!jpeg_decode(bytes, err, cinfo, out))
    fail(path, fmt::format("unreadable JPEG: {}", err.message));
  return out;
}

std::string lower_ext(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return e;
}
bool is_image_name(const fs::path& p) {
  const std::string e = lower_ext(p);
  return e == ".png" || e == ".jpg" || e == ".jpeg";
}

Image decode_image(const fs::path& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return lower_ext(path) == ".png" ? decode_png(path, bytes) : decode_jpeg(path, bytes);
}

// Sorted subfolders (hidden ones skipped).
std::vector<fs::path> subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().front() != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The image files of each class folder of `dir`, classes in `names` order (the training split's).
std::vector<std::pair<fs::path, uint8_t>> folder_files(const fs::path& dir,
                                                       const std::vector<std::string>& names) {
  std::vector<std::pair<fs::path, uint8_t>> files;
  for (size_t k = 0; k < names.size(); ++k) {
    const fs::path cls = dir / names[k];
    if (!is_dir(cls)) continue;  // (a test split may lack a class)
    std::vector<fs::path> imgs;
    for (const auto& e : fs::directory_iterator(cls)) {
      if (e.is_regular_file() && is_image_name(e.path())) imgs.push_back(e.path());
    }
    if (imgs.empty()) fail(cls, "empty class folder: no .png, .jpg or .jpeg file in it");
    std::sort(imgs.begin(), imgs.end());
    for (const auto& p : imgs) files.emplace_back(p, static_cast<uint8_t>(k));
  }
  return files;
}

// Decodes `files` into `d`; the first image decoded (of either split) sets the shape both must
// have.
void set_shape(Dataset& to, const Dataset& from) {
  to.rows = from.rows;
  to.cols = from.cols;
  to.channels = from.channels;
}

// Decodes `files` into `d`; every image must have the shape of `shape`, which the first image
// decoded sets while it has none (rows 0: decoders refuse images of no pixels).
void decode_into(const std::vector<std::pair<fs::path, uint8_t>>& files, Dataset& d, Dataset& shape,
                 size_t& done, size_t total, const LoadProgress& progress) {
  for (const auto& [path, label] : files) {
    const Image im = decode_image(path);
    if (shape.rows == 0) {
      shape.rows = im.h;
      shape.cols = im.w;
      shape.channels = im.c;
    }
    if (im.h != shape.rows || im.w != shape.cols || im.c != shape.channels) {
      fail(path, fmt::format("the image is {}x{}x{}, the others are {}x{}x{} (HxWxC): a dataset's "
                             "images must share one size and channel count",
                             im.h, im.w, im.c, shape.rows, shape.cols, shape.channels));
    }
    d.images.insert(d.images.end(), im.hwc.begin(), im.hwc.end());
    d.labels.push_back(label);
    ++done;
    if (progress && (done % 256 == 0 || done == total)) progress(done, total);
  }
}

Data load_folder(const fs::path& dir, const LoadProgress& progress) {
  Data data;
  data.format = "folder";
  const bool split = is_dir(dir / "train") && is_dir(dir / "test");
  const fs::path train_dir = split ? dir / "train" : dir;
  for (const auto& p : subdirs(train_dir)) data.class_names.push_back(p.filename().string());
  if (data.class_names.empty()) fail(train_dir, "no class subfolders");
  if (data.class_names.size() > 256) {
    fail(train_dir, fmt::format("{} class folders: at most 256 classes", data.class_names.size()));
  }
  const auto train_files = folder_files(train_dir, data.class_names);
  std::vector<std::pair<fs::path, uint8_t>> test_files;
  if (split) {
    for (const auto& p : subdirs(dir / "test")) {
      const std::string n = p.filename().string();
      if (std::find(data.class_names.begin(), data.class_names.end(), n) ==
          data.class_names.end()) {
        fail(p, "a test class folder with no training folder of that name");
      }
    }
    test_files = folder_files(dir / "test", data.class_names);
  }
  const size_t total = train_files.size() + test_files.size();
  size_t done = 0;
  decode_into(train_files, data.train, data.train, done, total, progress);
  decode_into(test_files, data.test, data.train, done, total, progress);
  set_shape(data.test, data.train);
  return data;
}

// ---------------------------------------------------------------- IDX directories
Data load_idx_dir(const fs::path& dir) {
  Data data;
  data.format = "idx";
  const fs::path ti = plain_or_gz(dir, "train-images-idx3-ubyte"),
                 tl = plain_or_gz(dir, "train-labels-idx1-ubyte");
  if (tl.empty()) fail(dir / "train-labels-idx1-ubyte", "missing (next to the training images)");
  data.train = load_idx(ti, tl);
  const fs::path si = plain_or_gz(dir, "t10k-images-idx3-ubyte"),
                 sl = plain_or_gz(dir, "t10k-labels-idx1-ubyte");
  if (!si.empty()) {
    if (sl.empty()) fail(dir / "t10k-labels-idx1-ubyte", "missing (next to the test images)");
    data.test = load_idx(si, sl);
    const Dataset& a = data.train;
    const Dataset& b = data.test;
    if (a.rows != b.rows || a.cols != b.cols || a.channels != b.channels) {
      fail(si, fmt::format("test images are {}x{}x{}, training images {}x{}x{}", b.rows, b.cols,
                           b.channels, a.rows, a.cols, a.channels));
    }
  } else {
    set_shape(data.test, data.train);
  }
  return data;
}

}  // namespace

Data load_data(const fs::path& dir, const LoadProgress& progress) {
  if (!is_dir(dir)) {
    fail(dir,
         "not a directory: --data takes a dataset directory (IDX, CIFAR-10/100 binary or an "
         "image folder, docs/data.md)");
  }
  if (!plain_or_gz(dir, "train-images-idx3-ubyte").empty()) return load_idx_dir(dir);
  if (is_file(dir / "data_batch_1.bin")) return load_cifar(dir, false);
  if (is_file(dir / "train.bin")) return load_cifar(dir, true);
  return load_folder(dir, progress);
}

namespace {

// `spec` as a count of the n images: "5000", or a fraction "0.1" of them (at least one).
size_t split_count(std::string_view spec, size_t n) {
  const std::string t(spec);
  auto bad = [&](std::string_view why) -> size_t {
    throw std::runtime_error(fmt::format("--val-split {}: {}", t, why));
  };
  if (t.empty()) return bad("expected a count or a fraction in (0, 1)");
  size_t used = 0;
  if (t.find_first_of(".eE") != std::string::npos) {
    double f = 0;
    try {
      f = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || !(f > 0.0 && f < 1.0)) return bad("expected a fraction in (0, 1)");
    return std::max<size_t>(1, static_cast<size_t>(f * static_cast<double>(n)));
  }
  unsigned long long c = 0;
  try {
    c = std::stoull(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || t.front() == '-' || c == 0) return bad("expected a count >= 1");
  return static_cast<size_t>(c);
}

// splitmix64: the seeded shuffle's generator (the same on every platform, unlike std::
// distributions)
uint64_t mix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

JobData job_data(const fs::path& dir, std::string_view val_split, uint64_t seed,
                 const LoadProgress& progress) {
  JobData j;
  if (dir.empty()) {
    j.source = "fashion-mnist";
    j.format = "idx";
    j.train = load_fashion_mnist("train");
    j.test = load_fashion_mnist("test");
    constexpr size_t kTrain = 60000, kVal = 10000, kTest = 10000;
    if (j.train.size() != kTrain || j.test.size() != kTest) {
      throw std::runtime_error(
          fmt::format("Fashion-MNIST: {} training and {} test images, expected {} and {}",
                      j.train.size(), j.test.size(), kTrain, kTest));
    }
    j.val = val_split.empty() ? kVal : split_count(val_split, kTrain);
  } else {
    Data d = load_data(dir, progress);
    j.source = dir.string();
    j.format = d.format;
    j.train = std::move(d.train);
    j.test = std::move(d.test);
    j.class_names = std::move(d.class_names);
    j.val = split_count(val_split.empty() ? "0.1" : val_split, j.train.size());
  }
  if (j.val >= j.train.size()) {
    throw std::runtime_error(fmt::format(
        "--val-split {}: the training split holds {} images; the validation split must leave "
        "some for training",
        val_split.empty() ? std::to_string(j.val) : std::string(val_split), j.train.size()));
  }
  if (dir.empty() && val_split.empty()) return j;  // the default job: the last 10,000
  // a seeded choice of the validation images (a partial Fisher-Yates shuffle), moved to the end
  const size_t n = j.train.size();
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  uint64_t s = seed;
  for (size_t i = 0; i < j.val; ++i) std::swap(idx[i], idx[i + mix(s) % (n - i)]);
  std::vector<bool> is_val(n, false);
  for (size_t i = 0; i < j.val; ++i) is_val[idx[i]] = true;
  Dataset out;
  set_shape(out, j.train);
  out.images.reserve(j.train.images.size());
  out.labels.reserve(n);
  for (const bool val_pass : {false, true}) {
    for (size_t i = 0; i < n; ++i) {
      if (is_val[i] != val_pass) continue;
      const auto im = j.train.image(i);
      out.images.insert(out.images.end(), im.begin(), im.end());
      out.labels.push_back(j.train.labels[i]);
    }
  }
  j.train = std::move(out);
  return j;
}

void check_fits(const Dataset& d, std::string_view spec_name, int in_h, int in_w, int in_c,
                int classes, std::string_view what) {
  if (static_cast<int64_t>(d.rows) != in_h || static_cast<int64_t>(d.cols) != in_w ||
      static_cast<int64_t>(d.channels) != in_c) {
    throw std::runtime_error(fmt::format("spec '{}' expects {}x{}x{}, the data is {}x{}x{} ({})",
                                         spec_name, in_h, in_w, in_c, d.rows, d.cols, d.channels,
                                         what));
  }
  for (size_t i = 0; i < d.labels.size(); ++i) {
    if (d.labels[i] >= classes) {
      throw std::runtime_error(
          fmt::format("{}: image {} has label {}, spec '{}' has {} classes (0..{})", what, i,
                      d.labels[i], spec_name, classes, classes - 1));
    }
  }
}

}  // namespace nasa::data
