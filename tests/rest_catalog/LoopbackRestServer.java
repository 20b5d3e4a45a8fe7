// Apache Iceberg's REST catalog test server on 127.0.0.1 only, for lakewide's tests.
//
// The same pieces as org.apache.iceberg.rest.RESTCatalogServer (iceberg-open-api test
// fixtures, the server of the apache/iceberg-rest-fixture image): Iceberg's JdbcCatalog behind
// RESTCatalogAdapter and RESTCatalogServlet (iceberg-core test fixtures) in Jetty 11, but with
// its connector bound to the loopback address (RESTCatalogServer listens on every interface).
// With a 4th argument CLIENT_ID:SECRET it is an OAuth2 server that checks them: a token request
// with other client credentials, and a request without the token it issued, get 401.
// Catalog properties also come from environment variables CATALOG_<NAME>, as in the
// apache/iceberg-rest-fixture image: "__" becomes "-", "_" becomes "." and the name is lower
// case (CATALOG_S3_PATH__STYLE__ACCESS=true is s3.path-style-access), e.g. CATALOG_IO__IMPL
// for S3FileIO on an s3:// warehouse.
// With -Dlakewide.faults=FILE it reads FILE (when present) on every request, for the tests'
// bad inputs: "500-any" answers the next request with 500 (once), "500-commit" the next table
// commit (once), "revoke" refuses every token it issued (401, until FILE is removed), and
// "halt-commit" applies the next table commit, then halts the JVM without answering (the
// network dropping in the middle of a commit). A fault used once deletes FILE.
// Run in Java's source-file mode:
//   java -cp CLASSPATH LoopbackRestServer.java PORT WAREHOUSE JDBC_URI [CLIENT_ID:SECRET]
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ReadListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

public class LoopbackRestServer {
  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("catalog-impl", JdbcCatalog.class.getName());
    props.put("jdbc.schema-version", "V1");
    props.put("warehouse", args[1]);
    props.put("uri", args[2]);
    for (Map.Entry<String, String> env : System.getenv().entrySet()) {
      if (env.getKey().startsWith("CATALOG_")) {
        String name = env.getKey().substring("CATALOG_".length()).toLowerCase();
        props.put(name.replace("__", "-").replace("_", "."), env.getValue());
      }
    }
    Catalog catalog = CatalogUtil.buildIcebergCatalog("rest_backend", props, new Configuration());

    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(catalog))), "/*");
    if (args.length > 3) {
      String[] client = args[3].split(":", 2);
      context.addFilter(new org.eclipse.jetty.servlet.FilterHolder(new ClientCheck(client[0], client[1])),
          "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    String faults = System.getProperty("lakewide.faults");
    if (faults != null) {
      context.addFilter(new org.eclipse.jetty.servlet.FilterHolder(new Faults(Path.of(faults))),
          "/*", EnumSet.of(DispatcherType.REQUEST));
    }
    context.insertHandler(new GzipHandler());
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(Integer.parseInt(args[0]));
    server.addConnector(connector);
    server.setHandler(context);
    server.start();
    server.join();
  }

  /** Client credentials checked on the token endpoint, the issued token on every other call. */
  static class ClientCheck implements Filter {
    private final String id;
    private final String secret;

    ClientCheck(String id, String secret) {
      this.id = id;
      this.secret = secret;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
        throws IOException, jakarta.servlet.ServletException {
      HttpServletRequest http = (HttpServletRequest) req;
      HttpServletResponse out = (HttpServletResponse) res;
      String path = http.getRequestURI();
      if (path.endsWith("/oauth/tokens")) {
        byte[] body = http.getInputStream().readAllBytes();
        Map<String, String> form = new HashMap<>();
        for (String pair : new String(body, StandardCharsets.UTF_8).split("&")) {
          String[] kv = pair.split("=", 2);
          form.put(URLDecoder.decode(kv[0], StandardCharsets.UTF_8),
              kv.length > 1 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
        }
        if (!id.equals(form.get("client_id")) || !secret.equals(form.get("client_secret"))) {
          deny(out, "{\"error\":\"invalid_client\",\"error_description\":\"bad client\"}");
          return;
        }
        chain.doFilter(new Replayed(http, body), res);
        return;
      }
      String auth = http.getHeader("Authorization");
      if (!path.endsWith("/config") && (auth == null || !auth.contains("sub=" + id))) {
        deny(out, "{\"error\":{\"message\":\"Not authorized\","
            + "\"type\":\"NotAuthorizedException\",\"code\":401}}");
        return;
      }
      chain.doFilter(req, res);
    }

    private static void deny(HttpServletResponse out, String json) throws IOException {
      out.setStatus(401);
      out.setContentType("application/json");
      out.getWriter().write(json);
    }
  }

  /** The faults of the tests' bad inputs (see the header), read from a file per request. */
  static class Faults implements Filter {
    private final Path file;

    Faults(Path file) {
      this.file = file;
    }

    @Override
    public synchronized void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
        throws IOException, jakarta.servlet.ServletException {
      HttpServletRequest http = (HttpServletRequest) req;
      HttpServletResponse out = (HttpServletResponse) res;
      String path = http.getRequestURI();
      String fault = Files.exists(file) ? Files.readString(file).trim() : "";
      boolean commit = "POST".equals(http.getMethod())
          && path.matches(".*/namespaces/[^/]+/tables/[^/]+");
      boolean open = path.endsWith("/config") || path.endsWith("/oauth/tokens");
      if (fault.equals("revoke") && !open) {
        fail(out, 401, "NotAuthorizedException", "Token expired or revoked");
        return;
      }
      if ((fault.equals("500-any") && !open) || (fault.equals("500-commit") && commit)) {
        Files.deleteIfExists(file);
        fail(out, 500, "RuntimeException", "Internal server error (injected once)");
        return;
      }
      if (fault.equals("halt-commit") && commit) {
        Files.deleteIfExists(file);
        chain.doFilter(req, new Unanswered(out));
        Runtime.getRuntime().halt(3);
      }
      chain.doFilter(req, res);
    }

    private static void fail(HttpServletResponse out, int code, String type, String message)
        throws IOException {
      out.setStatus(code);
      out.setContentType("application/json");
      out.getWriter().write("{\"error\":{\"message\":\"" + message + "\",\"type\":\""
          + type + "\",\"code\":" + code + "}}");
    }
  }

  /** A response whose body goes nowhere (the server halts before answering). */
  static class Unanswered extends HttpServletResponseWrapper {
    Unanswered(HttpServletResponse response) {
      super(response);
    }

    @Override
    public PrintWriter getWriter() {
      return new PrintWriter(new StringWriter());
    }

    @Override
    public jakarta.servlet.ServletOutputStream getOutputStream() {
      return new jakarta.servlet.ServletOutputStream() {
        @Override public void write(int b) {}
        @Override public boolean isReady() { return true; }
        @Override public void setWriteListener(jakarta.servlet.WriteListener listener) {}
      };
    }

    @Override public void setStatus(int sc) {}
    @Override public void setHeader(String name, String value) {}
    @Override public void addHeader(String name, String value) {}
    @Override public void flushBuffer() {}
  }

  /** A request whose body, already read, is read again by the servlet. */
  static class Replayed extends HttpServletRequestWrapper {
    private final byte[] body;

    Replayed(HttpServletRequest request, byte[] body) {
      super(request);
      this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
      ByteArrayInputStream in = new ByteArrayInputStream(body);
      return new ServletInputStream() {
        @Override public int read() { return in.read(); }
        @Override public boolean isFinished() { return in.available() == 0; }
        @Override public boolean isReady() { return true; }
        @Override public void setReadListener(ReadListener listener) {}
      };
    }

    @Override
    public BufferedReader getReader() {
      return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }
  }
}
