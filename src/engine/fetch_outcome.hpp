// The transport's result of one attempt as the crawl state reads it.
#pragma once

#include "http/fetch_result.hpp"
#include "state/fetch_outcome.hpp"

namespace asiocrawl::detail {

/// The state's view of `response`: its strings are views into `response`, which must outlive the use.
fetch_outcome outcome_of(const fetch_result& response);

} // namespace asiocrawl::detail
