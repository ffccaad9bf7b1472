// CDXJ indexes of finished WARC files: the WARC read back record by record (gzip member by gzip member),
// one line per response, revisit and resource record, sorted in byte order.
#include <asiocrawl/outputs/archive.hpp>
#include <asiocrawl/outputs/warc.hpp>

#include "http/content_type.hpp"
#include "util/ascii.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

namespace asiocrawl::outputs {

namespace {

namespace ascii = asiocrawl::detail::ascii;

// What is kept of a record: its headers and the start of its block. Enough for the HTTP head and an HTML
// page's <title>; a record's headers that do not fit make it unreadable.
constexpr std::size_t record_prefix_limit = 64 * 1024;
constexpr std::size_t read_chunk = 64 * 1024;

std::runtime_error failure(const std::string& path, std::uint64_t offset, const std::string& what) {
    return std::runtime_error(path + ": " + what + " at offset " + std::to_string(offset));
}

struct file_closer {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

file_ptr open_for_reading(const std::string& path) {
    file_ptr f{std::fopen(path.c_str(), "rb")};
    if (!f)
        throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
    return f;
}

/// The value of header `name` (case-insensitive) in a block of "Name: value\r\n" lines, trimmed.
std::optional<std::string_view> header_value(std::string_view head, std::string_view name) {
    std::size_t at = 0;
    while (at < head.size()) {
        std::size_t end = head.find("\r\n", at);
        if (end == std::string_view::npos)
            end = head.size();
        const std::string_view line = head.substr(at, end - at);
        const auto colon = line.find(':');
        if (colon != std::string_view::npos &&
            ascii::iequals(ascii::trim(line.substr(0, colon), " \t"), name))
            return ascii::trim(line.substr(colon + 1), ascii::http_whitespace);
        at = end + 2;
    }
    return std::nullopt;
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        if (c >= 0x80) {
            if ((c >> 5) == 0x6)
                n = 1;
            else if ((c >> 4) == 0xE)
                n = 2;
            else if ((c >> 3) == 0x1E)
                n = 3;
            else
                return false;
        }
        if (n > s.size() - i - 1)
            return false;
        for (std::size_t k = 1; k <= n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2)
                return false;
        i += n + 1;
    }
    return true;
}

/// The text of the first <title> element in `html`, or "" when there is none (or it is not closed).
std::string html_title(std::string_view html) {
    const std::string lower = ascii::to_lower(html);
    std::size_t open = lower.find("<title");
    while (open != std::string::npos && open + 6 < lower.size() && lower[open + 6] != '>' &&
           !ascii::is_html_whitespace(lower[open + 6]))
        open = lower.find("<title", open + 6);
    if (open == std::string::npos)
        return "";
    const auto start = lower.find('>', open);
    if (start == std::string::npos)
        return "";
    const auto end = lower.find("</title", start);
    if (end == std::string::npos)
        return "";
    const std::string_view raw = html.substr(start + 1, end - start - 1);
    static constexpr std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}, {"&apos;", '\''}};
    std::string text;
    bool blank = false;
    for (std::size_t i = 0; i < raw.size() && text.size() < 1000;) {
        if (ascii::is_html_whitespace(raw[i])) {
            blank = true;
            ++i;
            continue;
        }
        if (blank && !text.empty())
            text += ' ';
        blank = false;
        if (raw[i] == '&') {
            bool decoded = false;
            for (const auto& [name, value] : entities) {
                if (raw.substr(i, name.size()) == name) {
                    text += value;
                    i += name.size();
                    decoded = true;
                    break;
                }
            }
            if (decoded)
                continue;
        }
        text += raw[i++];
    }
    // Cut at 1000 bytes: a character cut in two goes.
    for (int i = 0; i < 3 && !valid_utf8(text); ++i)
        text.pop_back();
    return valid_utf8(text) ? text : "";
}

/// The capture a record makes, from its first bytes (`prefix`: headers and the start of the block); nullopt
/// for a record that is not indexed.
std::optional<warc_capture> capture_of(std::string_view prefix, std::uint64_t offset, std::uint64_t length,
                                       const std::string& path) {
    if (!prefix.starts_with("WARC/"))
        throw failure(path, offset, "not a WARC record");
    const auto head_end = prefix.find("\r\n\r\n");
    if (head_end == std::string_view::npos)
        throw failure(path, offset, "WARC headers longer than 64 KiB or cut off");
    const std::string_view head = prefix.substr(0, head_end + 2);
    const std::string type = ascii::to_lower(header_value(head, "WARC-Type").value_or(""));
    if (type != "response" && type != "revisit" && type != "resource")
        return std::nullopt;
    warc_capture c;
    c.type = type;
    c.url = std::string(header_value(head, "WARC-Target-URI").value_or(""));
    if (c.url.starts_with('<') && c.url.ends_with('>')) // WARC 1.0's form
        c.url = c.url.substr(1, c.url.size() - 2);
    c.date = std::string(header_value(head, "WARC-Date").value_or(""));
    c.digest = std::string(header_value(head, "WARC-Payload-Digest").value_or(""));
    c.offset = offset;
    c.length = length;
    const std::string record_type =
        asiocrawl::detail::parse_content_type(header_value(head, "Content-Type").value_or("")).type;
    if (type == "resource" || record_type != "application/http") {
        c.mime = type == "revisit" ? "warc/revisit" : record_type;
        if (type == "resource")
            c.status = "200";
        return c;
    }
    // An HTTP response (or a revisit's response head): "HTTP/1.1 200 OK", then its header fields.
    const std::string_view block = prefix.substr(head_end + 4);
    const auto http_end = block.find("\r\n\r\n");
    const std::string_view http_head = block.substr(0, http_end == std::string_view::npos ? 0 : http_end + 2);
    const std::string_view status_line = block.substr(0, block.find("\r\n"));
    if (status_line.starts_with("HTTP/")) {
        const auto space = status_line.find(' ');
        if (space != std::string_view::npos) {
            const std::string_view code = status_line.substr(space + 1, 3);
            if (code.size() == 3 && std::all_of(code.begin(), code.end(), ascii::is_digit))
                c.status = std::string(code);
        }
    }
    c.mime = type == "revisit"
                 ? "warc/revisit"
                 : asiocrawl::detail::parse_content_type(header_value(http_head, "Content-Type").value_or(""))
                       .type;
    if (type == "response" && c.status == "200" && http_end != std::string_view::npos &&
        (c.mime == "text/html" || c.mime == "application/xhtml+xml")) {
        const auto coding = header_value(http_head, "Content-Encoding");
        if (!coding || coding->empty() || ascii::iequals(*coding, "identity"))
            c.title = html_title(http_payload(block, http_end + 4));
    }
    return c;
}

/// Plain WARC: each record is its headers, Content-Length bytes of block and two CRLFs.
void index_plain(std::FILE* f, const std::string& path, std::vector<warc_capture>& out) {
    if (::fseeko(f, 0, SEEK_END) != 0)
        throw failure(path, 0, std::string("cannot seek: ") + std::strerror(errno));
    const auto size = static_cast<std::uint64_t>(::ftello(f));
    // The file's bytes from `held_from` on, at most 64 KiB: a small record's successors are read with it.
    std::string held;
    std::uint64_t held_from = 0;
    std::string chunk(read_chunk, '\0');
    for (std::uint64_t offset = 0; offset < size;) {
        if (offset < held_from || offset > held_from + held.size()) {
            held.clear();
            held_from = offset;
        } else {
            held.erase(0, static_cast<std::size_t>(offset - held_from));
            held_from = offset;
        }
        if (held.size() < read_chunk && held_from + held.size() < size) {
            if (::fseeko(f, static_cast<off_t>(held_from + held.size()), SEEK_SET) != 0)
                throw failure(path, offset, std::string("cannot seek: ") + std::strerror(errno));
            const std::size_t n = std::fread(chunk.data(), 1, read_chunk - held.size(), f);
            if (n == 0)
                throw failure(path, offset, std::string("cannot read: ") + std::strerror(errno));
            held.append(chunk.data(), n);
        }
        const std::string_view data = held;
        if (!data.starts_with("WARC/"))
            throw failure(path, offset, "not a WARC record");
        const auto head_end = data.find("\r\n\r\n");
        if (head_end == std::string_view::npos)
            throw failure(path, offset,
                          data.size() < read_chunk ? "file cut inside a record's headers"
                                                   : "WARC headers longer than 64 KiB");
        const auto declared = header_value(data.substr(0, head_end + 2), "Content-Length");
        std::uint64_t content_length = 0;
        if (!declared || declared->empty() ||
            !std::all_of(declared->begin(), declared->end(), ascii::is_digit) || declared->size() > 18)
            throw failure(path, offset, "record without a valid Content-Length");
        for (char d : *declared)
            content_length = content_length * 10 + static_cast<std::uint64_t>(d - '0');
        const std::uint64_t length = head_end + 4 + content_length + 4;
        if (size - offset < length)
            throw failure(path, offset, "file cut inside a record");
        const std::size_t keep = static_cast<std::size_t>(std::min<std::uint64_t>(
            data.size(), std::min<std::uint64_t>(head_end + 4 + content_length, record_prefix_limit)));
        if (auto c = capture_of(data.substr(0, keep), offset, length, path))
            out.push_back(std::move(*c));
        offset += length;
    }
}

/// Compressed WARC: one gzip member per record; a member's offset and length are where it sits in the file.
void index_gzip(std::FILE* f, const std::string& path, std::vector<warc_capture>& out) {
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        throw std::runtime_error(path + ": zlib cannot start");
    struct ender {
        z_stream* z;
        ~ender() { inflateEnd(z); }
    } end_inflate{&z};
    std::string in(read_chunk, '\0');
    std::string produced(read_chunk, '\0');
    std::uint64_t consumed = 0; // file bytes consumed by the members before this one
    auto refill = [&] {
        const std::size_t n = std::fread(in.data(), 1, in.size(), f);
        if (n == 0 && std::ferror(f))
            throw failure(path, consumed, std::string("cannot read: ") + std::strerror(errno));
        z.next_in = reinterpret_cast<Bytef*>(in.data());
        z.avail_in = static_cast<uInt>(n);
        return n > 0;
    };
    for (;;) {
        if (z.avail_in == 0 && !refill())
            return;
        inflateReset(&z);
        std::string prefix;
        for (;;) {
            if (z.avail_in == 0 && !refill())
                throw failure(path, consumed, "file cut inside a gzip member");
            z.next_out = reinterpret_cast<Bytef*>(produced.data());
            z.avail_out = static_cast<uInt>(produced.size());
            const int rc = inflate(&z, Z_NO_FLUSH);
            const std::size_t got = produced.size() - z.avail_out;
            if (prefix.size() < record_prefix_limit)
                prefix.append(produced.data(), std::min(got, record_prefix_limit - prefix.size()));
            if (rc == Z_STREAM_END)
                break;
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                throw failure(path, consumed,
                              std::string("damaged gzip member (") + (z.msg ? z.msg : "zlib") + ")");
        }
        const std::uint64_t length = z.total_in;
        if (auto c = capture_of(prefix, consumed, length, path))
            out.push_back(std::move(*c));
        consumed += length;
    }
}

} // namespace

std::string surt_key(std::string_view url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos ||
        url.substr(0, scheme_end).find_first_of("/?#") != std::string_view::npos)
        return std::string(url);
    const std::string scheme = ascii::to_lower(url.substr(0, scheme_end));
    std::string_view rest = url.substr(scheme_end + 3);
    rest = rest.substr(0, rest.find('#'));
    const auto authority_end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, authority_end);
    std::string_view path_and_query =
        authority_end == std::string_view::npos ? "" : rest.substr(authority_end);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);

    std::string_view host = authority;
    std::string_view port;
    if (authority.starts_with('[')) { // IPv6 literal: kept as it is
        const auto close = authority.find(']');
        host = authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1);
        if (close != std::string_view::npos && close + 1 < authority.size() && authority[close + 1] == ':')
            port = authority.substr(close + 2);
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    std::string h = ascii::to_lower(host);
    while (!h.empty() && h.back() == '.')
        h.pop_back();
    // pywb's host massage: one leading "www." or "www<digits>." goes.
    if (h.starts_with("www")) {
        std::size_t i = 3;
        while (i < h.size() && ascii::is_digit(h[i]))
            ++i;
        if (i < h.size() && h[i] == '.')
            h.erase(0, i + 1);
    }
    std::string key;
    if (h.starts_with('[')) {
        key = h;
    } else {
        std::size_t end = h.size();
        for (;;) {
            const auto dot = h.rfind('.', end == 0 ? 0 : end - 1);
            if (dot == std::string::npos || end == 0) {
                key.append(h, 0, end);
                break;
            }
            key.append(h, dot + 1, end - dot - 1);
            key += ',';
            end = dot;
        }
    }
    const bool default_port =
        port.empty() || (scheme == "http" && port == "80") || (scheme == "https" && port == "443");
    if (!default_port) {
        key += ':';
        key += port;
    }
    key += ')';

    const auto question = path_and_query.find('?');
    std::string path = ascii::to_lower(path_and_query.substr(0, question));
    if (path.empty())
        path = "/";
    else if (path.size() > 1 && path.back() == '/')
        path.pop_back();
    key += path;
    if (question != std::string_view::npos && question + 1 < path_and_query.size()) {
        const std::string query = ascii::to_lower(path_and_query.substr(question + 1));
        std::vector<std::string_view> params;
        for (std::size_t at = 0;;) {
            const auto amp = query.find('&', at);
            params.push_back(
                std::string_view(query).substr(at, amp == std::string::npos ? std::string::npos : amp - at));
            if (amp == std::string::npos)
                break;
            at = amp + 1;
        }
        std::sort(params.begin(), params.end());
        key += '?';
        for (std::size_t i = 0; i < params.size(); ++i) {
            if (i > 0)
                key += '&';
            key += params[i];
        }
    }
    return key;
}

std::string cdx_timestamp(std::string_view warc_date) {
    std::string digits;
    for (char c : warc_date) {
        if (ascii::is_digit(c))
            digits += c;
        if (digits.size() == 14)
            return digits;
    }
    return "";
}

std::vector<warc_capture> index_warc_file(const std::string& path) {
    const file_ptr f = open_for_reading(path);
    std::vector<warc_capture> out;
    // Compressed or not by the content (gzip's magic), whatever the name says.
    unsigned char magic[2] = {0, 0};
    const std::size_t n = std::fread(magic, 1, 2, f.get());
    std::rewind(f.get());
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
        index_gzip(f.get(), path, out);
    else
        index_plain(f.get(), path, out);
    return out;
}

std::string cdxj_line(const warc_capture& capture, std::string_view filename) {
    boost::json::object fields;
    fields["url"] = capture.url;
    if (!capture.mime.empty())
        fields["mime"] = capture.mime;
    if (!capture.status.empty())
        fields["status"] = capture.status;
    if (!capture.digest.empty())
        fields["digest"] = capture.digest;
    fields["length"] = std::to_string(capture.length);
    fields["offset"] = std::to_string(capture.offset);
    fields["filename"] = filename;
    return surt_key(capture.url) + ' ' + cdx_timestamp(capture.date) + ' ' + boost::json::serialize(fields);
}

std::string cdxj_path_for(const std::string& warc_path) {
    std::string base = warc_path;
    for (std::string_view ending : {".warc.gz", ".warc", ".gz"}) {
        if (base.size() > ending.size() && base.ends_with(ending)) {
            base.resize(base.size() - ending.size());
            break;
        }
    }
    return base + ".cdxj";
}

std::vector<warc_capture> write_cdxj(const std::string& warc_path) {
    std::vector<warc_capture> captures = index_warc_file(warc_path);
    const auto slash = warc_path.rfind('/');
    const std::string filename = slash == std::string::npos ? warc_path : warc_path.substr(slash + 1);
    std::vector<std::string> lines;
    lines.reserve(captures.size());
    for (const auto& c : captures)
        lines.push_back(cdxj_line(c, filename));
    std::sort(lines.begin(), lines.end());

    const std::string target = cdxj_path_for(warc_path);
    const std::string temporary = target + ".asiocrawl-tmp";
    std::FILE* f = std::fopen(temporary.c_str(), "wb");
    if (!f)
        throw std::runtime_error("output.cdxj: cannot write " + temporary + ": " + std::strerror(errno));
    bool ok = true;
    for (const auto& line : lines)
        ok = ok && std::fwrite(line.data(), 1, line.size(), f) == line.size() && std::fputc('\n', f) != EOF;
    const int saved = errno;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(temporary.c_str(), target.c_str()) != 0) {
        const std::string why = std::strerror(ok ? errno : saved);
        std::remove(temporary.c_str());
        throw std::runtime_error("output.cdxj: cannot write " + target + ": " + why);
    }
    return captures;
}

} // namespace asiocrawl::outputs
