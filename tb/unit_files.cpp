// Crash-safe file output (nasa/files.h): a failed write leaves the old file whole and no
// temporary behind; appends are whole lines; stale temporaries of a killed writer are found.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "nasa/files.h"
#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Files : public nasa::testing::TempDirTest {
 protected:
  Files() : TempDirTest("unit_files_") {}
  size_t entries() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}));
  }
};

TEST_F(Files, WriteReplacesWholeAndLeavesNoTemporary) {
  const fs::path p = dir_ / "a.json";
  nasa::write_file_atomic(p, "old\n");
  nasa::write_file_atomic(p, "new content\n");
  EXPECT_EQ(slurp(p), "new content\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(Files, FailedWriteKeepsTheOldFileAndRemovesTheTemporary) {
  const fs::path p = dir_ / "model.safetensors";
  nasa::write_file_atomic(p, "old");
  EXPECT_THROW(nasa::write_atomic(p,
                                  [](const fs::path& tmp) {
                                    std::ofstream(tmp) << "half of the new";
                                    throw std::runtime_error("disk full");
                                  }),
               std::runtime_error);
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(Files, WriteIntoAMissingDirectoryNamesIt) {
  try {
    nasa::write_file_atomic(dir_ / "no" / "x.json", "{}");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no/x.json.tmp."), std::string::npos) << e.what();
  }
}

TEST_F(Files, AppendWritesWholeLines) {
  const fs::path p = dir_ / "log.jsonl";
  nasa::append_line_durable(p, "{\"a\": 1}");
  nasa::append_line_durable(p, "{\"b\": 2}");
  EXPECT_EQ(slurp(p), "{\"a\": 1}\n{\"b\": 2}\n");
  EXPECT_THROW(nasa::append_line_durable(dir_ / "no" / "log", "x"), std::runtime_error);
}

TEST_F(Files, StaleTemporariesAreFoundAndRemovedRecursively) {
  fs::create_directories(dir_ / "sub");
  nasa::write_file_atomic(dir_ / "keep.json", "{}");
  std::ofstream(dir_ / "result.json.tmp.4242") << "{\"trunc";
  std::ofstream(dir_ / "sub" / "w.safetensors.tmp.17") << "x";
  std::ofstream(dir_ / "sub" / "notes.tmp") << "a user's file";
  EXPECT_TRUE(nasa::is_atomic_temporary("a/b/result.json.tmp.4242"));
  EXPECT_FALSE(nasa::is_atomic_temporary("notes.tmp"));
  EXPECT_FALSE(nasa::is_atomic_temporary("x.tmp.12a"));
  EXPECT_EQ(nasa::remove_stale_temporaries(dir_), 2u);
  EXPECT_TRUE(fs::exists(dir_ / "keep.json"));
  EXPECT_TRUE(fs::exists(dir_ / "sub" / "notes.tmp"));
  EXPECT_FALSE(fs::exists(dir_ / "result.json.tmp.4242"));
  EXPECT_EQ(nasa::remove_stale_temporaries(dir_ / "missing"), 0u);
}

}  // namespace
