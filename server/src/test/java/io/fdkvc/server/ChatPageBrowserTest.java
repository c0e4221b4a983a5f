package io.fdkvc.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The chat page in a real headless Chromium (Debian's {@code chromium} and {@code chromium-driver},
 * which {@code .ci/run} installs), driven by Selenium with the system's driver and browser, so
 * Selenium Manager never downloads anything. Every wait is on a condition, never a sleep.
 *
 * <p>The side-by-side screenshot goes to {@code -Dfdkvc.screenshot=PATH} when given (the README's
 * {@code docs/serve-page.png} is made so), else to {@code target/serve-page.png}.
 */
class ChatPageBrowserTest {
    static final Path CHROMIUM = Path.of("/usr/bin/chromium"), DRIVER = Path.of("/usr/bin/chromedriver");

    ChromeDriver driver;
    WebDriverWait wait;

    @BeforeEach
    void browser() {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER))
                .as("the browser tests need Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver; .ci/run does)")
                .isTrue();
        System.setProperty("webdriver.chrome.driver", DRIVER.toString());
        ChromeOptions o = new ChromeOptions();
        o.setBinary(CHROMIUM.toFile());
        o.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1480,1010",
                "--force-device-scale-factor=1", "--disable-extensions", "--no-first-run");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile()).usingAnyFreePort().build();
        driver = new ChromeDriver(service, o);
        wait = new WebDriverWait(driver, Duration.ofSeconds(90));
        wait.ignoring(org.openqa.selenium.StaleElementReferenceException.class); // the page re-renders what it waits on
    }

    @AfterEach
    void close() {
        if (driver != null) driver.quit();
    }

    private void ready(String base) {
        driver.get(base + "/");
        wait.until(d -> "true".equals(d.findElement(By.tagName("body")).getDomAttribute("data-ready")));
    }

    private void startConversation(String policyA, int budgetA, String policyB, int budgetB) {
        new Select(driver.findElement(By.id("policy-a"))).selectByValue(policyA);
        setNumber("budget-a", budgetA);
        WebElement sbs = driver.findElement(By.id("side-by-side"));
        if (sbs.isSelected() != (policyB != null)) sbs.click();
        if (policyB != null) {
            new Select(driver.findElement(By.id("policy-b"))).selectByValue(policyB);
            setNumber("budget-b", budgetB);
        }
        driver.findElement(By.id("new-button")).click();
        int panes = policyB == null ? 1 : 2;
        wait.until(d -> d.findElements(By.cssSelector(".pane")).size() == panes);
    }

    private void setNumber(String id, int v) {
        WebElement e = driver.findElement(By.id(id));
        e.clear();
        e.sendKeys(String.valueOf(v));
    }

    /** Types a message, sends it with Enter, and waits for every pane's reply to finish. */
    private void say(String text) {
        int before = driver.findElements(By.cssSelector(".msg.assistant.done")).size();
        int panes = driver.findElements(By.cssSelector(".pane")).size();
        WebElement input = driver.findElement(By.id("input"));
        input.sendKeys(text);
        input.sendKeys(Keys.ENTER);
        wait.until(d -> d.findElements(By.cssSelector(".msg.assistant.done")).size() == before + panes
                && d.findElement(By.id("send")).isEnabled());
    }

    /** Clicks what {@code by} finds, again if the page re-rendered it meanwhile (the session list refreshes itself). */
    private void click(By by) {
        wait.until(d -> {
            d.findElement(by).click();
            return true;
        });
    }

    private List<WebElement> tokens(WebElement pane, String css) {
        return pane.findElements(By.cssSelector(".tokens .tok" + css));
    }

    private String paneSession(int i) {
        return driver.findElements(By.cssSelector(".pane")).get(i).getDomAttribute("data-session");
    }

    @Test
    void aConversationShowsItsCacheTurnByTurnResumesAndRunsSideBySide() throws Exception {
        try (var s = TestServers.start(TestServers.options(8, null, null, 4, 8), "full", 256, 64)) {
            HttpResponse<String> page = Http.get(s.base() + "/");
            assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow()).contains("script-src 'self'")
                    .contains("default-src 'none'").doesNotContain("unsafe-inline");
            ready(s.base());
            assertThat(driver.findElement(By.id("model")).getText()).contains("stories260K").contains("server policy full");
            assertThat(((JavascriptExecutor) driver).executeScript("return typeof Chart")).isEqualTo("function");

            // a conversation on window with a budget of 24: streamed replies, then evictions
            startConversation("window", 24, null, 0);
            say("Once upon a time there was a cat.");
            WebElement reply = driver.findElement(By.cssSelector(".msg.assistant.done"));
            assertThat(reply.getText()).isNotBlank();
            assertThat(Integer.parseInt(reply.getDomAttribute("data-chunks"))).as("the reply arrived in pieces").isGreaterThan(1);
            assertThat(driver.findElement(By.id("input")).getDomProperty("value")).isEmpty();
            say("What did the cat do?");
            WebElement input = driver.findElement(By.id("input"));
            input.sendKeys("Tell me about the dog.");
            input.sendKeys(Keys.chord(Keys.SHIFT, Keys.ENTER));
            say("And the bird?");
            List<WebElement> users = driver.findElements(By.cssSelector(".msg.user"));
            assertThat(users.getLast().getDomProperty("textContent")).isEqualTo("Tell me about the dog.\nAnd the bird?");
            WebElement pane = driver.findElement(By.cssSelector(".pane"));
            String first = paneSession(0);
            int total = tokens(pane, "").size();
            assertThat(total).isGreaterThan(24);
            // window holds the last 24 positions in every stream, nothing else
            assertThat(tokens(pane, ":not(.gone)")).hasSize(24);
            assertThat(tokens(pane, ".gone")).hasSize(total - 24);
            assertThat(tokens(pane, ".evicted-now")).isNotEmpty();
            assertThat(tokens(pane, ":not(.gone)").getFirst().getDomAttribute("title")).contains("held by").contains("per layer");
            assertThat(pane.findElement(By.cssSelector(".totals")).getText()).contains("budget 24").contains("evicted last turn");
            assertThat(pane.findElements(By.cssSelector(".chart-box canvas"))).hasSize(1);

            // another conversation, then back to the first one from the session list
            startConversation("fdkvc", 24, null, 0);
            say("Hello there.");
            driver.findElement(By.id("refresh")).click();
            By resume = By.cssSelector("#sessions li[data-session='" + first + "'] .resume");
            click(resume);
            wait.until(d -> first.equals(paneSession(0)) && d.findElements(By.cssSelector(".pane .msg")).size() == 6);
            say("The end.");
            assertThat(Http.json(Http.get(s.base() + "/v1/sessions/" + first)).get("turns").asInt()).isEqualTo(4);

            // side by side: window and fdkvc on the same messages
            startConversation("window", 24, "fdkvc", 24);
            for (String u : new String[] {"Once upon a time there was a girl named Lily.", "Lily had a red ball.",
                    "Where did Lily go?", "What colour was the ball?"}) {
                say(u);
            }
            List<WebElement> panes = driver.findElements(By.cssSelector(".pane"));
            assertThat(panes.get(0).findElement(By.cssSelector(".policy-name")).getText()).isEqualTo("window");
            assertThat(panes.get(1).findElement(By.cssSelector(".policy-name")).getText()).isEqualTo("fdkvc");
            for (WebElement p : panes) {
                assertThat(p.findElements(By.cssSelector(".msg.assistant.done"))).hasSize(4);
                assertThat(tokens(p, ".gone")).isNotEmpty();
            }
            // the two caches hold different tokens of the same conversation
            assertThat(heldPattern(panes.get(0))).isNotEqualTo(heldPattern(panes.get(1)));
            Path shot = Path.of(System.getProperty("fdkvc.screenshot", "target/serve-page.png"));
            Files.createDirectories(shot.toAbsolutePath().getParent());
            File png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
            Files.copy(png.toPath(), shot, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(Files.size(shot)).isPositive();

            // markup in a reply is shown as text, never run
            String hostile = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script><b>bold</b>";
            var body = Http.JSON.createObjectNode();
            body.put("max_tokens", 4);
            body.put("temperature", 0);
            var ms = body.putArray("messages");
            ms.addObject().put("role", "user").put("content", "Say something.");
            ms.addObject().put("role", "assistant").put("content", hostile);
            ms.addObject().put("role", "user").put("content", "<script>window.__pwned=3</script>");
            assertThat(Http.post(s.base() + "/v1/chat/completions", Http.JSON.writeValueAsString(body), "X-Session-Id", "hostile")
                    .statusCode()).isEqualTo(200);
            driver.findElement(By.id("refresh")).click();
            click(By.cssSelector("#sessions li[data-session='hostile'] .resume"));
            wait.until(d -> "hostile".equals(paneSession(0)));
            WebElement hp = driver.findElement(By.cssSelector(".pane"));
            assertThat(hp.findElements(By.cssSelector(".msg.assistant")).getFirst().getDomProperty("textContent")).isEqualTo(hostile);
            assertThat(hp.findElements(By.cssSelector(".msg *:not(.note), .tok *, .tokens > :not(.tok)"))).isEmpty();
            assertThat(hp.findElement(By.cssSelector(".tokens")).getDomProperty("textContent")).contains("onerror").contains("<script>");
            assertThat(((JavascriptExecutor) driver).executeScript("return window.__pwned === undefined")).isEqualTo(true);
        }
    }

    /** Which tokens a pane's cache view shows as held (1) or evicted everywhere (0). */
    private String heldPattern(WebElement pane) {
        StringBuilder b = new StringBuilder();
        for (WebElement t : tokens(pane, "")) b.append("0".equals(t.getDomAttribute("data-held")) ? '0' : '1');
        return b.toString();
    }

    @Test
    void thePageAsksForTheApiKeyAndKeepsItForTheTab() throws Exception {
        try (var s = TestServers.start(TestServers.options(4, null, "sesame", 2, 4), "window", 32, 64)) {
            assertThat(Http.get(s.base() + "/v1/models").statusCode()).isEqualTo(401);
            assertThat(Http.get(s.base() + "/").statusCode()).isEqualTo(200);
            driver.get(s.base() + "/");
            wait.until(d -> d.findElement(By.id("key-dialog")).getDomAttribute("open") != null);
            WebElement key = driver.findElement(By.id("key-input"));
            key.sendKeys("sesame");
            key.sendKeys(Keys.ENTER);
            wait.until(d -> "true".equals(d.findElement(By.tagName("body")).getDomAttribute("data-ready")));
            assertThat(driver.findElement(By.id("model")).getText()).contains("stories260K");
            assertThat(((JavascriptExecutor) driver).executeScript("return sessionStorage.getItem('fdkvc.apiKey')")).isEqualTo("sesame");
            assertThat(((JavascriptExecutor) driver).executeScript("return localStorage.length")).isEqualTo(0L);
            startConversation("window", 16, null, 0);
            say("Once upon a time there was a cat.");
            assertThat(driver.findElements(By.cssSelector(".tokens .tok"))).isNotEmpty();
        }
    }
}
