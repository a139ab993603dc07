// libpq's client API (Debian libpq-dev: /usr/include/postgresql/libpq-fe.h).
#include <libpq-fe.h>
