package lockbench.example;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The partner (lockbench's fake partner: Auth0's management API) through the
 * JDK's java.net.http.HttpClient, as a RestClient with timeouts would call it.
 * X-Op-Id carries lockbench's request id, so the partner's oracle can tell the
 * calls of one request from another's (docs/reference/service-contract.md).
 */
final class PartnerClient {
  private final HttpClient http;
  private final String base;
  private final Duration readTimeout;

  PartnerClient(String base, long connectTimeoutMs, long readTimeoutMs) {
    this.base = base;
    this.readTimeout = Duration.ofMillis(readTimeoutMs);
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofMillis(connectTimeoutMs))
        .build();
  }

  /** GET /api/v2/users/{id}: true when the partner answered 2xx. */
  boolean getUser(String userId, long requestId) throws InterruptedException {
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/api/v2/users/" + encodeSegment(userId)))
        .timeout(readTimeout)
        .header("X-Op-Id", Long.toString(requestId))
        .header("X-Client-Timeout-Ms", Long.toString(readTimeout.toMillis()))
        .GET()
        .build();
    try {
      HttpResponse<Void> r = http.send(req, HttpResponse.BodyHandlers.discarding());
      return r.statusCode() / 100 == 2;
    } catch (IOException e) {  // a timeout or a refused connection: the call's effect is unknown
      return false;
    }
  }

  // RFC 3986's unreserved characters stay; every other byte is %XX (as lockbench's client encodes it).
  static String encodeSegment(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if (Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '.' || c == '_' || c == '~') {
        b.append((char) c);
      } else {
        b.append('%').append("0123456789ABCDEF".charAt(c >> 4)).append("0123456789ABCDEF".charAt(c & 15));
      }
    }
    return b.toString();
  }
}
