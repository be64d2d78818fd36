#include "fake_partner/model/check.hpp"
