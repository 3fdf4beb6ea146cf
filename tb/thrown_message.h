// Checking a rejected call by what its exception says: the host library's validation errors
// must name the offending value, so the tests match the text, not just the type.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>

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

// The message of the `E` that `f` throws; fails the test ("expected a <name>") when nothing is
// thrown. (Another exception type propagates and fails the test with its own message.)
template <class E>
std::string message_of(const std::function<void()>& f, const char* name) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a " << name;
  return {};
}

}  // namespace nasa::testing
