// Checking a rejected argument by what the message says: the host library's validation errors
// must name the offending value, so the tests match parts of the text, not just the type.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>

namespace nasa::testing {

// Expects `f` to throw std::invalid_argument whose message contains every one of `parts`.
template <typename F>
void expect_invalid(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    for (const char* p : parts) EXPECT_THAT(e.what(), ::testing::HasSubstr(p));
  }
}

}  // namespace nasa::testing
