// The fdkvc chat page. Everything the model (or anyone) wrote reaches the page through
// textContent and text nodes only, never as HTML. Talks to the same OpenAI-compatible API any
// client uses: /v1/chat/completions (SSE), /v1/sessions, /v1/sessions/{id}/cache, /v1/policies.
'use strict';

const CACHE_LIMIT = 4096;   // the cache endpoint's documented maximum per call
const SEED = 7;             // the same seed for every conversation: side by side differs by policy only

const state = {
  key: sessionStorage.getItem('fdkvc.apiKey'),
  catalog: null,
  model: null,
  panes: [],
  controllers: [],
  sending: false,
};

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// ---- API ----------------------------------------------------------------------------------

function askKey() {
  return new Promise((resolve) => {
    const d = $('key-dialog');
    const input = $('key-input');
    input.value = '';
    const done = (ok) => {
      $('key-form').onsubmit = null;
      $('key-cancel').onclick = null;
      d.close();
      if (ok && input.value) {
        state.key = input.value;
        sessionStorage.setItem('fdkvc.apiKey', state.key);
      }
      resolve(ok && !!input.value);
    };
    $('key-form').onsubmit = (ev) => { ev.preventDefault(); done(true); };
    $('key-cancel').onclick = () => done(false);
    d.showModal();
    input.focus();
  });
}

async function api(path, options = {}, retried = false) {
  const headers = Object.assign({}, options.headers || {});
  if (state.key) headers['Authorization'] = 'Bearer ' + state.key;
  const r = await fetch(path, Object.assign({}, options, { headers }));
  if (r.status === 401 && !retried) {
    if (await askKey()) return api(path, options, true);
  }
  return r;
}

async function errorText(r) {
  try {
    const j = await r.json();
    if (j && j.error && j.error.message) return j.error.message;
  } catch (e) { /* not JSON */ }
  return 'HTTP ' + r.status;
}

async function getJson(path) {
  const r = await api(path);
  if (!r.ok) throw new Error(await errorText(r));
  return r.json();
}

// ---- policies and the new-conversation form -----------------------------------------------

function fillPolicies(select, preferred) {
  select.textContent = '';
  for (const p of state.catalog.data) {
    if (!p.selectable) continue;
    const o = el('option', null, p.name);
    o.value = p.name;
    o.title = p.description;
    select.appendChild(o);
  }
  if ([...select.options].some((o) => o.value === preferred)) select.value = preferred;
}

function policyOf(name) {
  return state.catalog.data.find((p) => p.name === name);
}

function fillParams(box, name) {
  box.textContent = '';
  const p = policyOf(name);
  if (!p) return;
  for (const q of p.params) {
    if (q.fixed) continue;
    const label = el('label', null, q.name);
    label.title = q.description + (q.range ? ' [' + q.range + ']' : '');
    const input = el('input');
    input.type = 'number';
    input.step = q.type === 'double' ? 'any' : '1';
    input.value = String(q.default);
    input.dataset.name = q.name;
    input.dataset.default = String(q.default);
    label.appendChild(input);
    box.appendChild(label);
  }
}

function describePolicy() {
  const p = policyOf($('policy-a').value);
  $('policy-help').textContent = p ? p.description : '';
}

function readChoice(which) {
  const policy = $('policy-' + which).value;
  const budget = Number($('budget-' + which).value);
  const params = {};
  for (const input of $('params-' + which).querySelectorAll('input')) {
    if (input.value !== input.dataset.default && input.value !== '') params[input.dataset.name] = Number(input.value);
  }
  return { policy, budget, params };
}

function newId() {
  const r = (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
  return 'ui-' + r;
}

// ---- panes --------------------------------------------------------------------------------

function clearPanes() {
  for (const p of state.panes) if (p.chart) p.chart.destroy();
  state.panes = [];
  $('panes').textContent = '';
}

function makePane(id, policy, budget, ext) {
  const pane = { id, policy, budget, ext, messages: [], turns: [], streams: 0, lastEvictions: null };
  const root = el('section', 'pane');
  root.dataset.session = id;
  const head = el('header', 'pane-head');
  pane.title = el('h2', 'policy-name', policy);
  pane.badge = el('span', 'badge', 'budget ' + budget);
  head.append(pane.title, pane.badge, el('span', 'sid', id));
  pane.chat = el('div', 'chat');
  pane.chat.setAttribute('aria-live', 'polite');

  const cache = el('div', 'cache');
  pane.totals = el('div', 'totals');
  const legend = el('div', 'legend');
  const ramp = el('span', 'ramp');
  legend.append(el('span', null, 'held by 0'), ramp, el('span', null, 'all streams'));
  for (const [cls, text] of [['gone', 'evicted everywhere'], ['evicted-now', 'evicted by the last turn'],
                             ['user', 'your turn'], ['assistant', 'reply']]) {
    const item = el('span');
    item.append(el('span', 'sw ' + cls), document.createTextNode(text));
    legend.appendChild(item);
  }
  pane.tokens = el('div', 'tokens');
  pane.tokens.setAttribute('aria-label', 'what the cache holds, token by token');
  pane.hover = el('div', 'hover-info', 'Hover a token for its position, turn and per-layer counts.');
  pane.tokens.addEventListener('mouseover', (ev) => {
    const t = ev.target.closest('.tok');
    if (t) pane.hover.textContent = t.title;
  });
  cache.append(pane.totals, legend, pane.tokens, pane.hover);

  const chartBox = el('div', 'chart-box');
  const canvas = el('canvas');
  canvas.setAttribute('aria-label', 'per-turn chart: entries held, evictions, decode speed');
  chartBox.appendChild(canvas);
  root.append(head, pane.chat, cache, chartBox);
  pane.root = root;
  $('panes').appendChild(root);
  pane.chart = makeChart(canvas);
  renderTotals(pane, null);
  return pane;
}

function makeChart(canvas) {
  if (!window.Chart) return null;
  return new Chart(canvas, {
    data: {
      labels: [],
      datasets: [
        { type: 'line', label: 'entries held (all streams)', data: [], borderColor: '#2459d6', backgroundColor: '#2459d6', yAxisID: 'y', tension: 0.2 },
        { type: 'bar', label: 'evicted this turn', data: [], backgroundColor: 'rgba(220, 38, 38, 0.55)', yAxisID: 'y' },
        { type: 'line', label: 'decode tokens/s', data: [], borderColor: '#0f766e', backgroundColor: '#0f766e', borderDash: [5, 4], yAxisID: 'speed', tension: 0.2 },
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      plugins: { legend: { labels: { boxWidth: 12, font: { size: 11 } } } },
      scales: {
        x: { title: { display: true, text: 'turn' }, ticks: { font: { size: 10 } } },
        y: { beginAtZero: true, title: { display: true, text: 'entries' }, ticks: { font: { size: 10 } } },
        speed: { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: 'tok/s' }, ticks: { font: { size: 10 } } },
      },
    },
  });
}

function addMessage(pane, role, text) {
  const m = el('div', 'msg ' + role, text);
  pane.chat.appendChild(m);
  pane.chat.scrollTop = pane.chat.scrollHeight;
  return m;
}

function fmtBytes(b) {
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(1) + ' MiB';
  if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + ' KiB';
  return b + ' B';
}

function stat(label, value) {
  const s = el('span', null, label + ' ');
  s.appendChild(el('b', null, value));
  return s;
}

function renderTotals(pane, view) {
  pane.totals.textContent = '';
  if (!view) {
    pane.totals.appendChild(el('span', null, 'No turn yet.'));
    return;
  }
  const last = pane.turns[pane.turns.length - 1];
  const perStream = view.streams ? (view.totalEntries / view.streams) : 0;
  pane.totals.append(
    stat('turn', String(view.turns)),
    stat('entries', view.totalEntries + ' (' + perStream.toFixed(1) + ' / stream)'),
    stat('budget', view.budget + ' / stream × ' + view.streams + ' streams'),
    stat('KV', fmtBytes(view.kvBytes)),
    stat('evicted last turn', last ? String(last.evicted) : '–'),
    stat('decode', last && last.speed !== null ? last.speed.toFixed(0) + ' tok/s' : '–'));
}

function tokenTitle(t, streams) {
  let s = 'position ' + t.position + ' · turn ' + (t.turn || '?') + ' · ' + t.role + ' · held by ' + t.held + ' of ' + streams + ' streams';
  if (t.layers) s += ' · per layer ' + t.layers.join(' ');
  return s;
}

function renderCache(pane, view) {
  pane.streams = view.streams;
  const evictedNow = new Set(view.evictedLastTurn.map((e) => e.position));
  const frag = document.createDocumentFragment();
  for (const t of view.tokens) {
    const share = view.streams ? t.held / view.streams : 0;
    const span = el('span', 'tok ' + t.role);
    let text = t.text;
    if (text === '') {
      text = '·';
      span.classList.add('special');
    }
    span.textContent = text.replace(/\n/g, '⏎\n');
    span.style.backgroundColor = 'rgba(36, 89, 214, ' + (0.04 + 0.81 * share).toFixed(3) + ')';
    if (share > 0.55) span.style.color = '#ffffff';
    if (t.held === 0) span.classList.add('gone');
    if (evictedNow.has(t.position)) span.classList.add('evicted-now');
    span.dataset.held = String(t.held);
    span.title = tokenTitle(t, view.streams);
    frag.appendChild(span);
  }
  pane.tokens.textContent = '';
  pane.tokens.appendChild(frag);
  pane.tokens.scrollTop = pane.tokens.scrollHeight;
  renderTotals(pane, view);
}

async function refreshCache(pane, total) {
  const from = Math.max(0, (total || 0) - CACHE_LIMIT);
  const view = await getJson('/v1/sessions/' + encodeURIComponent(pane.id) + '/cache?layers=true&from=' + from);
  renderCache(pane, view);
  return view;
}

function recordTurn(pane, view, speed) {
  const evicted = pane.lastEvictions === null ? 0 : view.evictions - pane.lastEvictions;
  pane.lastEvictions = view.evictions;
  pane.turns.push({ entries: view.totalEntries, evicted, speed });
  if (pane.chart) {
    pane.chart.data.labels.push(String(view.turns));
    pane.chart.data.datasets[0].data.push(view.totalEntries);
    pane.chart.data.datasets[1].data.push(evicted);
    pane.chart.data.datasets[2].data.push(speed);
    pane.chart.update();
  }
  renderTotals(pane, view);
}

// ---- sending ------------------------------------------------------------------------------

async function streamTurn(pane, controller) {
  const body = {
    model: state.model,
    messages: pane.messages.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0,
    seed: SEED,
  };
  if (pane.ext) body.fdkvc = pane.ext;
  const bubble = addMessage(pane, 'assistant streaming', '');
  bubble.dataset.chunks = '0';
  let text = '';
  let usage = null;
  let first = 0;
  let failed = null;
  try {
    const r = await api('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Session-Id': pane.id },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!r.ok) throw new Error(await errorText(r));
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data: ')) continue;
          const data = line.slice(6);
          if (data === '[DONE]') continue;
          const chunk = JSON.parse(data);
          if (chunk.error) throw new Error(chunk.error.message);
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices && chunk.choices[0];
          const piece = choice && choice.delta && choice.delta.content;
          if (piece) {
            if (!first) first = performance.now();
            text += piece;
            bubble.textContent = text;
            bubble.dataset.chunks = String(Number(bubble.dataset.chunks) + 1);
            pane.chat.scrollTop = pane.chat.scrollHeight;
          }
        }
      }
    }
  } catch (e) {
    failed = e;
  }
  bubble.classList.remove('streaming');
  if (failed) {
    // the server rolls a cancelled or failed turn back: the message is not part of the conversation
    pane.messages.pop();
    bubble.classList.add(controller.signal.aborted ? 'stopped' : 'error');
    bubble.textContent = text;
    bubble.appendChild(el('span', 'note', controller.signal.aborted ? 'stopped: this turn was not kept'
      : 'failed: ' + failed.message));
    return;
  }
  bubble.classList.add('done');
  pane.messages.push({ role: 'assistant', content: text });
  const seconds = first ? (performance.now() - first) / 1000 : 0;
  const speed = usage && seconds > 0 && usage.completion_tokens > 1 ? (usage.completion_tokens - 1) / seconds : null;
  try {
    const view = await refreshCache(pane, usage ? usage.total_tokens : 0);
    recordTurn(pane, view, speed);
  } catch (e) {
    pane.hover.textContent = 'cache view: ' + e.message;
  }
}

async function send() {
  const input = $('input');
  const text = input.value;
  if (state.sending || !text.trim() || state.panes.length === 0) return;
  input.value = '';
  setSending(true);
  state.controllers = state.panes.map(() => new AbortController());
  await Promise.all(state.panes.map((pane, i) => {
    pane.messages.push({ role: 'user', content: text });
    addMessage(pane, 'user', text);
    return streamTurn(pane, state.controllers[i]);
  }));
  // the first turn fixed each session's policy: later requests need not repeat it
  setSending(false);
  loadSessions();
}

function stop() {
  for (const c of state.controllers) c.abort();
}

function setSending(on) {
  state.sending = on;
  $('send').disabled = on || state.panes.length === 0;
  $('stop').disabled = !on;
  document.body.classList.toggle('sending', on);
}

// ---- sessions -----------------------------------------------------------------------------

async function loadSessions() {
  let list;
  try {
    list = await getJson('/v1/sessions');
  } catch (e) {
    return;
  }
  const ul = $('sessions');
  ul.textContent = '';
  if (list.data.length === 0) ul.appendChild(el('li', 'none', 'No sessions yet.'));
  const current = new Set(state.panes.map((p) => p.id));
  for (const s of list.data) {
    const li = el('li');
    li.dataset.session = s.id;
    const b = el('button', 'resume' + (current.has(s.id) ? ' current' : ''));
    b.type = 'button';
    b.append(el('span', 'sid', s.id), el('span', 'meta', s.policy + ' · budget ' + s.budget + ' · ' + s.turns + ' turns'));
    b.setAttribute('aria-label', 'Resume session ' + s.id);
    b.onclick = () => resume(s.id);
    const del = el('button', 'delete', '✕');
    del.type = 'button';
    del.setAttribute('aria-label', 'Delete session ' + s.id);
    del.onclick = async () => {
      const r = await api('/v1/sessions/' + encodeURIComponent(s.id), { method: 'DELETE' });
      if (r.ok && current.has(s.id)) clearPanes();
      loadSessions();
    };
    li.append(b, del);
    ul.appendChild(li);
  }
}

async function resume(id) {
  if (state.sending) return;
  let info, view;
  try {
    info = await getJson('/v1/sessions/' + encodeURIComponent(id));
    view = await getJson('/v1/sessions/' + encodeURIComponent(id) + '/cache?layers=true&messages=true&from='
      + Math.max(0, info.tokens - CACHE_LIMIT));
  } catch (e) {
    $('form-error').textContent = e.message;
    return;
  }
  clearPanes();
  const pane = makePane(id, info.policy, info.budget, null); // the session keeps its own policy
  state.panes.push(pane);
  for (const m of view.messages) {
    pane.messages.push({ role: m.role, content: m.content });
    addMessage(pane, m.role, m.content);
  }
  pane.lastEvictions = view.evictions;
  renderCache(pane, view);
  setSending(false);
  loadSessions();
  $('input').focus();
}

function start(ev) {
  ev.preventDefault();
  $('form-error').textContent = '';
  const choices = [readChoice('a')];
  if ($('side-by-side').checked) choices.push(readChoice('b'));
  for (const c of choices) {
    if (!Number.isInteger(c.budget) || c.budget < 1 || c.budget > state.catalog.maxBudget) {
      $('form-error').textContent = 'budget must be an integer in 1..' + state.catalog.maxBudget;
      return;
    }
  }
  clearPanes();
  for (const c of choices) {
    const ext = { policy: c.policy, budget: c.budget };
    if (Object.keys(c.params).length) ext.params = c.params;
    state.panes.push(makePane(newId(), c.policy, c.budget, ext));
  }
  setSending(false);
  $('input').focus();
}

// ---- start-up -----------------------------------------------------------------------------

async function init() {
  $('new-form').addEventListener('submit', start);
  $('send').addEventListener('click', send);
  $('stop').addEventListener('click', stop);
  $('refresh').addEventListener('click', loadSessions);
  $('key-button').addEventListener('click', async () => { if (await askKey()) init2(); });
  $('side-by-side').addEventListener('change', () => { $('choice-b').hidden = !$('side-by-side').checked; });
  $('policy-a').addEventListener('change', () => { fillParams($('params-a'), $('policy-a').value); describePolicy(); });
  $('policy-b').addEventListener('change', () => fillParams($('params-b'), $('policy-b').value));
  $('input').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      send();
    } else if (ev.key === 'Escape') {
      stop();
    }
  });
  setSending(false);
  await init2();
}

async function init2() {
  try {
    const models = await getJson('/v1/models');
    state.model = models.data[0].id;
    state.catalog = await getJson('/v1/policies');
  } catch (e) {
    $('model').textContent = 'not connected: ' + e.message;
    return;
  }
  const d = state.catalog.default;
  $('model').textContent = state.model + ' · server policy ' + d.policy + ', budget ' + d.budget + ' (requests may ask up to '
    + state.catalog.maxBudget + ')';
  fillPolicies($('policy-a'), d.policy);
  fillPolicies($('policy-b'), 'fdkvc');
  for (const w of ['a', 'b']) {
    const b = $('budget-' + w);
    b.max = String(state.catalog.maxBudget);
    b.value = String(Math.min(d.budget, state.catalog.maxBudget));
    fillParams($('params-' + w), $('policy-' + w).value);
  }
  describePolicy();
  document.body.dataset.ready = 'true';
  loadSessions();
}

document.addEventListener('DOMContentLoaded', init);
