#include "fake_partner/model/config.hpp"
