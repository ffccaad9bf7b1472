// normalize_reference with the document's character encoding: the WHATWG URL parser's query state encodes the
// query in the document's encoding, the rest of the URL in UTF-8.
#include "html/charset.hpp"
#include "url/url.hpp"

#include <string>

namespace asiocrawl {

boost::system::result<boost::urls::url> normalize_reference(boost::urls::url_view base,
                                                            std::string_view reference,
                                                            std::string_view document_encoding) {
    if (!query_uses_document_encoding(document_encoding))
        return normalize_reference(base, reference);
    const std::size_t question = reference.find('?');
    const std::size_t hash = reference.find('#');
    if (question == std::string_view::npos || (hash != std::string_view::npos && hash < question))
        return normalize_reference(base, reference);
    const std::size_t query_end = hash == std::string_view::npos ? reference.size() : hash;
    const std::string_view query = reference.substr(question + 1, query_end - question - 1);
    bool ascii = true;
    for (const char c : query)
        ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii)
        return normalize_reference(base, reference);
    std::string rewritten(reference.substr(0, question + 1));
    rewritten += encode_query(query, document_encoding);
    rewritten += reference.substr(query_end);
    return normalize_reference(base, rewritten);
}

} // namespace asiocrawl
