#include "fake_partner/model/call.hpp"
