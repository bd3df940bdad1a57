/* Bad-input checks shared by the kernels tests: the call throws std::invalid_argument
 * whose message starts with the module prefix and names the parameter. */
#ifndef INCLUDED_GPURADAR_TEST_INVALID_ARGUMENT_CHECK_H
#define INCLUDED_GPURADAR_TEST_INVALID_ARGUMENT_CHECK_H

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace gpuradar::test {

//! f() must throw std::invalid_argument containing `prefix` (the module's, or a stage's
//! "gpuradar::<stage>") and `text` (a parameter name, or a longer piece of the message).
template <typename F>
void expect_invalid(F&& f,
                    const std::string& text,
                    const std::string& prefix = "gpuradar::")
{
    try {
        f();
        ADD_FAILURE() << "no exception for " << text;
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(prefix), std::string::npos) << e.what();
    }
}

} // namespace gpuradar::test

#endif
