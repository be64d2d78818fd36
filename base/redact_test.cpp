#include "base/redact.hpp"

#include <gtest/gtest.h>

using lockbench::redact_driver_message;
using lockbench::redact_secrets;

TEST(Redact, TheUrlPasswordIsReplacedAndTheRestKept) {
  EXPECT_EQ(redact_secrets("postgresql://bench:s3cret@127.0.0.1:5432/db"), "postgresql://bench:***@127.0.0.1:5432/db");
  EXPECT_EQ(redact_secrets("--db: cannot connect to postgres://u:p%40ss@h/db: timeout"),
            "--db: cannot connect to postgres://u:***@h/db: timeout");
  EXPECT_EQ(redact_secrets("http://admin:hunter2@127.0.0.1:8080"), "http://admin:***@127.0.0.1:8080");
}

TEST(Redact, APasswordHoldingAnAtSignIsRedactedWhole) {
  EXPECT_EQ(redact_secrets("postgresql://u:p@ss@h/db"), "postgresql://u:***@h/db");
}

TEST(Redact, TheKeywordFormIsRedactedQuotedOrNot) {
  EXPECT_EQ(redact_secrets("host=h password=s3cret dbname=d"), "host=h password=*** dbname=d");
  EXPECT_EQ(redact_secrets("host=h password = 'a b\\'c' dbname=d"), "host=h password = *** dbname=d");
  EXPECT_EQ(redact_secrets("postgresql://h/db?sslmode=disable&password=s3cret&x=1"),
            "postgresql://h/db?sslmode=disable&password=***&x=1");
  EXPECT_EQ(redact_secrets("PASSWORD=s3cret"), "PASSWORD=***");
}

TEST(Redact, TextWithoutSecretsIsUnchangedAndRedactingTwiceChangesNothing) {
  for (const char* t : {"postgresql://postgres@127.0.0.1:5432/postgres", "http://127.0.0.1:8080", "no url here",
                        "password authentication failed for user \"bench\"", "a@b c://d", ""}) {
    EXPECT_EQ(redact_secrets(t), t);
  }
  const std::string once = redact_secrets("postgresql://u:pw@h/db password=pw");
  EXPECT_EQ(redact_secrets(once), once);
  EXPECT_EQ(once.find("pw@"), std::string::npos);
}

TEST(Redact, APercentEncodedPasswordKeyIsReadAsLibpqReadsIt) {
  EXPECT_EQ(redact_secrets("postgresql://u@h/db?%70assword=SECRET"), "postgresql://u@h/db?%70assword=***");
  EXPECT_EQ(redact_secrets("postgresql://u@h/db?sslmode=disable&%50ASSWORD=SECRET&x=1"),
            "postgresql://u@h/db?sslmode=disable&%50ASSWORD=***&x=1");
  EXPECT_EQ(redact_secrets("postgresql://u@h/db?sslpassword=SECRET"), "postgresql://u@h/db?sslpassword=***");
  const std::string once = redact_secrets("--db: postgresql://u@h/db?%70assword=SECRET: refused");
  EXPECT_EQ(once.find("SECRET"), std::string::npos) << once;
  EXPECT_EQ(redact_secrets(once), once);
}

TEST(Redact, ADbnameHoldingAConnectionStringIsRedactedInTurn) {
  const std::string r = redact_secrets("postgresql://h/?dbname=host%3Dh%20password%3DSECRET");
  EXPECT_EQ(r.find("SECRET"), std::string::npos) << r;
  EXPECT_NE(r.find("dbname="), std::string::npos) << r;
}

TEST(Redact, LibpqsOwnHostTextNeverCarriesAPieceOfThePassword) {
  // libpq splits at the first '@': password "p4ss", host "w0rd@db.example": it says so in its error.
  const std::string url = "postgresql://u:p4ss@w0rd@db.example:5432/db";
  const std::string msg = redact_driver_message(
      "could not translate host name \"w0rd@db.example\" to address: Name or service not known\n", url);
  EXPECT_EQ(msg.find("w0rd"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("p4ss"), std::string::npos) << msg;
  EXPECT_NE(msg.find("could not translate host name"), std::string::npos) << msg;
  EXPECT_EQ(redact_driver_message("connection refused", "postgresql://u@h/db"), "connection refused");
}
