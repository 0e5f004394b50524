// utc_time.h: the one way every part writes a time: UTC, ISO 8601
// ("2026-11-29T20:10:00Z"), as profiles, databases, job reports and
// benchmark outputs store it.
#ifndef MLVOCAB_UTC_TIME_H_
#define MLVOCAB_UTC_TIME_H_

#include <ctime>
#include <string>

namespace mla {

// strftime's format of a timestamp: "2026-11-29T20:10:00Z".
inline constexpr char kUtcTimestampFormat[] = "%Y-%m-%dT%H:%M:%SZ";

// `t` in UTC written with a strftime `format` (default: a timestamp); the
// result is cut at 63 bytes.
std::string UtcTime(std::time_t t, const char* format = kUtcTimestampFormat);

// Now, as UtcTime writes it.
std::string UtcNow();

}  // namespace mla

#endif  // MLVOCAB_UTC_TIME_H_
