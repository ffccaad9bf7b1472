// Precompiled once for the sans-io tests (test/CMakeLists.txt, ASIOCRAWL_TEST_PCH): the third-party and
// standard headers most of them include. No asiocrawl header belongs here: an edit to one must not rebuild
// this, and the header under test (each test's first include) must still bring the project headers it needs.
// That it brings its standard and Boost headers too is checked where the PCH is off (the TSan tree).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>
