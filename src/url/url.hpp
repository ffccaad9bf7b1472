// URL parsing, resolution and normalization. The normalized string is the crawl's dedup key.
#pragma once

#include <boost/system/result.hpp>
#include <boost/url/url.hpp>
#include <boost/url/url_view.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace asiocrawl {

/// Makes a reference as found in HTML or a Location header acceptable to an RFC 3986 parser, the way browsers
/// do instead of rejecting it: trims leading/trailing C0 controls and spaces, removes tabs and newlines,
/// turns backslashes before the query into slashes, and percent-encodes what RFC 3986 does not allow raw
/// (spaces, non-ASCII bytes, controls, `"<>\^`{|}`, a `%` not followed by two hex digits, a second `#`).
std::string clean_reference(std::string_view reference);

/// Resolves `reference` (cleaned with clean_reference first) against the absolute `base` per RFC 3986 §5.2,
/// including dot-segment removal above the root (all of §5.4.1 and §5.4.2 hold). Keeps the fragment and does
/// no other normalization. Fails with error::invalid_url when the reference cannot be parsed.
boost::system::result<boost::urls::url> resolve(boost::urls::url_view base, std::string_view reference);

/// Normalizes an absolute URL into the crawl's canonical form:
/// - scheme must be http or https (else error::unsupported_scheme), and a host must be present
///   (else error::invalid_url);
/// - userinfo ("user:password@") removed: it is never sent, and credentials must not reach logs or records;
/// - scheme and host lowercased, a trailing dot on the host removed (a host ending in two dots is invalid);
/// - the default port (80 for http, 443 for https) and an empty port removed;
/// - percent-encoding normalized: hex digits uppercased, unreserved characters (ALPHA DIGIT - . _ ~) decoded;
/// - dot segments removed; an empty path becomes "/";
/// - the fragment removed. The query is kept as is (apart from percent-encoding case).
boost::system::result<boost::urls::url> normalize(boost::urls::url_view absolute);

/// resolve() then normalize(): what the crawler does with every link and Location it finds.
boost::system::result<boost::urls::url> normalize_reference(boost::urls::url_view base,
                                                            std::string_view reference);

/// normalize_reference() for a reference found in a document whose character encoding is `document_encoding`
/// (a WHATWG encoding name, as detect_charset gives it; the reference itself is UTF-8, the document having
/// been decoded): as the WHATWG URL parser does with an encoding, the query is percent-encoded in the
/// document's encoding (a character it lacks as "&#N;"), the path and the rest in UTF-8. So on a windows-1252
/// page "t\u00E9?q=\u00E9" requests "t%C3%A9?q=%E9". With no encoding, UTF-8 or UTF-16 it is
/// normalize_reference().
boost::system::result<boost::urls::url> normalize_reference(boost::urls::url_view base,
                                                            std::string_view reference,
                                                            std::string_view document_encoding);

/// normalize_reference(base, reference, document_encoding) for the many references of one page: the same
/// results, cheaper. When the base is canonical (normalize() gives it back unchanged, as the crawl's page
/// URLs and resolved <base href>s are), a plain reference (characters RFC 3986 allows raw and percent
/// triplets before its fragment; relative, or http(s) with a host name of letters, digits, '-' and '.' or a
/// dotted quad and a port: the bulk of a site's links, "page.html", "../a/b?x=1", "/c", "#top",
/// "https://h/x") is resolved, cleaned and normalized in one pass over views of the base and the reference,
/// into one string. Any other reference goes through normalize_reference().
class reference_resolver {
public:
    explicit reference_resolver(boost::urls::url_view base, std::string_view document_encoding = {});

    boost::system::result<boost::urls::url> resolve(std::string_view reference) const;

    /// resolve()'s URL as text, without Boost.URL's parser for a plain reference (that parse costs several
    /// times the rest).
    boost::system::result<std::string> resolve_text(std::string_view reference) const;

    /// The base up to the last '/' of its path ("http://h/a/" for "http://h/a/b?q"); empty when the base is
    /// not canonical.
    std::string_view directory() const noexcept { return directory_; }

private:
    /// The one-pass form into `text`, or false when the reference is not one it takes.
    bool resolve_simple(std::string_view reference, std::string& text) const;

    boost::urls::url base_;
    std::string encoding_;
    bool canonical_ = false;
    std::string_view origin_;    // "http://h:8080": scheme and authority, from base_'s buffer
    std::string_view directory_; // origin_ and the path up to its last '/'
    mutable std::string text_;   // scratch buffer, reused from one reference to the next
    mutable std::string merged_;
};

/// Parses a root as typed by a user: "example.com/a" gets "http://", then normalize().
boost::system::result<boost::urls::url> parse_root(std::string_view root);

/// RFC 3986 §5.2.4 remove_dot_segments on an encoded path ("/a/b/../c" -> "/a/c", "/../g" -> "/g").
std::string remove_dot_segments(std::string_view path);

} // namespace asiocrawl
