// Precompiled once for the tests on sockets and the io loop (test/CMakeLists.txt, ASIOCRAWL_TEST_PCH): the
// sans-io set plus the Asio and Beast headers that the crawler's API, the loopback servers and the tests
// include. Compiled with BOOST_ASIO_NO_DEPRECATED, as those tests are.
#pragma once

#include "pch/core.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
