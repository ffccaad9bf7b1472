// Element names as the link extractor's tree construction tells them apart: the names gumbo 0.10.1 knows (its
// tag.in, which the extractor must match because gumbo is its oracle), every other name being `unknown`. Tree
// construction compares unknown names with one another as equal, as gumbo does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace asiocrawl::detail::html {

enum class tag : std::uint8_t {
    unknown,
    html,
    head,
    title,
    base,
    link,
    meta,
    style,
    script,
    noscript,
    template_,
    body,
    article,
    section,
    nav,
    aside,
    h1,
    h2,
    h3,
    h4,
    h5,
    h6,
    hgroup,
    header,
    footer,
    address,
    p,
    hr,
    pre,
    blockquote,
    ol,
    ul,
    li,
    dl,
    dt,
    dd,
    figure,
    figcaption,
    main,
    div,
    a,
    em,
    strong,
    small,
    s,
    cite,
    q,
    dfn,
    abbr,
    data,
    time,
    code,
    var,
    samp,
    kbd,
    sub,
    sup,
    i,
    b,
    u,
    mark,
    ruby,
    rt,
    rp,
    bdi,
    bdo,
    span,
    br,
    wbr,
    ins,
    del,
    image,
    img,
    iframe,
    embed,
    object,
    param,
    video,
    audio,
    source,
    track,
    canvas,
    map,
    area,
    math,
    mi,
    mo,
    mn,
    ms,
    mtext,
    mglyph,
    malignmark,
    annotation_xml,
    svg,
    foreignobject,
    desc,
    table,
    caption,
    colgroup,
    col,
    tbody,
    thead,
    tfoot,
    tr,
    td,
    th,
    form,
    fieldset,
    legend,
    label,
    input,
    button,
    select,
    datalist,
    optgroup,
    option,
    textarea,
    keygen,
    output,
    progress,
    meter,
    details,
    summary,
    menu,
    menuitem,
    applet,
    acronym,
    bgsound,
    dir,
    frame,
    frameset,
    noframes,
    isindex,
    listing,
    xmp,
    nextid,
    noembed,
    plaintext,
    rb,
    strike,
    basefont,
    big,
    blink,
    center,
    font,
    marquee,
    multicol,
    nobr,
    spacer,
    tt,
    rtc,
    // Known to the markup guard only (src/gumbo/markup_guard.cpp), whose model of tree construction follows
    // today's HTML: gumbo 0.10.1 does not know it, so find_tag() never returns it and the extractor takes a
    // <dialog> for an unknown element, as gumbo does.
    dialog,
    count_,
};

inline constexpr std::size_t tag_count = static_cast<std::size_t>(tag::count_);
/// The tags find_tag() returns: gumbo 0.10.1's names, every tag before `dialog`.
inline constexpr std::size_t gumbo_tag_count = static_cast<std::size_t>(tag::dialog);

/// The tag whose name is `lowercase_name` (ASCII letters already lowercased), or tag::unknown.
tag find_tag(std::string_view lowercase_name) noexcept;

/// A set of tags, tested in constant time.
class tag_set {
public:
    constexpr tag_set() = default;
    constexpr tag_set(std::initializer_list<tag> tags) {
        for (const tag t : tags)
            words_[static_cast<std::size_t>(t) / 64] |= std::uint64_t{1}
                                                        << (static_cast<std::size_t>(t) % 64);
    }
    constexpr bool contains(tag t) const noexcept {
        return (words_[static_cast<std::size_t>(t) / 64] >> (static_cast<std::size_t>(t) % 64)) & 1u;
    }

private:
    std::uint64_t words_[(tag_count + 63) / 64] = {};
};

} // namespace asiocrawl::detail::html
