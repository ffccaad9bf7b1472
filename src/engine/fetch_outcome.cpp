#include "engine/fetch_outcome.hpp"

#include "http/content_type.hpp"
#include "http/fetcher.hpp"

namespace asiocrawl::detail {

fetch_outcome outcome_of(const fetch_result& response) {
    fetch_outcome out;
    out.error = response.error;
    out.retryable = is_retryable(response.error);
    out.connected = !response.remote_ip.empty();
    out.status = response.status;
    auto media = parse_content_type(response.content_type);
    out.media_type = std::move(media.type);
    out.charset = std::move(media.charset);
    if (response.location)
        out.location = *response.location;
    if (response.retry_after)
        out.retry_after = *response.retry_after;
    out.etag = response.etag;
    out.protocol = response.protocol;
    out.last_modified = response.last_modified;
    out.x_robots_tag = response.x_robots_tag;
    out.link = response.link;
    out.sent_at = response.started;
    out.body = response.body;
    out.body_bytes = response.body_bytes;
    out.error_detail = response.error_detail;
    return out;
}

} // namespace asiocrawl::detail
