/*
 * main() of every GoogleTest binary (cmake/Modules/GpuradarTesting.cmake): GoogleTest's
 * run, and exit code 77 when every test that ran was skipped (a GPU suite without a
 * device), which ctest reports as skipped through SKIP_RETURN_CODE. A failure still
 * exits 1, whatever else was skipped, and a run of zero tests is not a skip.
 */
#include <gtest/gtest.h>

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    const int result = RUN_ALL_TESTS();
    const auto* unit = ::testing::UnitTest::GetInstance();
    const bool all_skipped = unit->test_to_run_count() > 0 &&
                             unit->skipped_test_count() == unit->test_to_run_count();
    if (result == 0 && all_skipped)
        return 77;
    return result;
}
