#pragma once
// The current time as SQLite writes it into every *_at column: ISO-8601 UTC with milliseconds,
// from SQLite's clock, so text comparison orders times.
#define COMERA_SQL_NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
