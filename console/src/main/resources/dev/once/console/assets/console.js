// Once console: fills the page from the JSON API (<path>/api). Data is only ever written as text (textContent),
// never as HTML. Actions are POSTs with the CSRF token from the XSRF-TOKEN cookie, after a dry-run count and a reason.
(function () {
  'use strict';
  var base = document.body.getAttribute('data-path');
  var operator = false;
  var charts = {};
  var latest = {};   // the newest reading of each chart series, for the overview's figures

  function cookie(name) {
    var match = document.cookie.split('; ').find(function (c) { return c.indexOf(name + '=') === 0; });
    return match ? decodeURIComponent(match.substring(name.length + 1)) : '';
  }

  function say(text, bad) {
    var status = document.getElementById('status');
    status.textContent = text;
    status.className = bad ? 'bad' : '';
  }

  function api(path, body) {
    var init = { credentials: 'same-origin', headers: { 'Accept': 'application/json' } };
    if (body) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.headers['X-XSRF-TOKEN'] = cookie('XSRF-TOKEN');
      init.body = JSON.stringify(body);
    }
    return fetch(base + '/api' + path, init).then(function (response) {
      if (response.status === 401) { window.location = base + '/login'; throw new Error('signed out'); }
      return response.json().catch(function () { return {}; }).then(function (json) {
        if (!response.ok) { throw new Error((json.detail || json.message || json.error || response.statusText) + (json.code ? ' (' + json.code + ')' : '')); }
        return json;
      });
    });
  }

  function query(params) {
    var q = new URLSearchParams();
    Object.keys(params).forEach(function (k) { if (params[k] !== null && params[k] !== undefined && params[k] !== '') { q.set(k, params[k]); } });
    var s = q.toString();
    return s ? '?' + s : '';
  }

  function cell(row, value, numeric) {
    var td = document.createElement('td');
    td.textContent = value === null || value === undefined ? '-' : (Array.isArray(value) ? value.join(', ') : String(value));
    if (numeric) { td.className = 'num'; }
    row.appendChild(td);
    return td;
  }

  // columns: [label, field or function, numeric]; actions(row) returns buttons for an operator
  function table(id, columns, rows, actions) {
    var el = document.getElementById(id);
    Array.from(el.querySelectorAll('thead, tbody')).forEach(function (n) { n.remove(); });
    var head = el.createTHead().insertRow();
    columns.forEach(function (c) {
      var th = document.createElement('th');
      th.scope = 'col';
      th.textContent = c[0];
      if (c[2]) { th.className = 'num'; }
      head.appendChild(th);
    });
    if (actions) { var th = document.createElement('th'); th.scope = 'col'; th.textContent = 'Actions'; head.appendChild(th); }
    var tbody = el.createTBody();
    if (rows.length === 0) {
      var empty = tbody.insertRow();
      var td = cell(empty, 'none');
      td.colSpan = columns.length + (actions ? 1 : 0);
      return;
    }
    rows.forEach(function (r) {
      var tr = tbody.insertRow();
      columns.forEach(function (c) { cell(tr, typeof c[1] === 'function' ? c[1](r) : r[c[1]], c[2]); });
      if (actions) {
        var td = document.createElement('td');
        actions(r).forEach(function (b) { td.appendChild(b); td.appendChild(document.createTextNode(' ')); });
        tr.appendChild(td);
      }
    });
  }

  function button(label, onClick, secondary) {
    var b = document.createElement('button');
    b.type = 'button';
    b.textContent = label;
    if (secondary) { b.className = 'secondary'; }
    b.addEventListener('click', onClick);
    return b;
  }

  // Asks for a reason (and shows the dry run's count), then runs the action; resolves once it ran or was cancelled.
  function confirmAction(title, countText, run) {
    var dialog = document.getElementById('confirm');
    var reason = document.getElementById('confirm-reason');
    document.getElementById('confirm-title').textContent = title;
    document.getElementById('confirm-count').textContent = countText;
    reason.value = '';
    var form = document.getElementById('confirm-form');
    var cancel = document.getElementById('confirm-cancel');
    var opener = document.activeElement;
    function close() { form.onsubmit = null; cancel.onclick = null; dialog.close(); if (opener) { opener.focus(); } }
    form.onsubmit = function (e) {
      e.preventDefault();
      if (!reason.value.trim()) { reason.focus(); return; }
      var text = reason.value;
      close();
      run(text).then(function (message) { say(message); refresh(true); }, function (err) { say(err.message, true); });
    };
    cancel.onclick = close;
    dialog.showModal();
    reason.focus();
  }

  function bulk(verb, filter) {
    api('/parked/count' + query(filter)).then(function (counts) {
      var n = verb === 'retry' ? counts.would_retry : counts.would_abandon;
      confirmAction((verb === 'retry' ? 'Retry' : 'Abandon') + ' parked events',
        n + ' event(s) would be ' + (verb === 'retry' ? 'retried' : 'abandoned') + '.',
        function (reason) {
          return api('/parked/' + verb, Object.assign({}, filter, { reason: reason })).then(function (done) {
            return (verb === 'retry' ? 'Retried ' + done.retried : 'Abandoned ' + done.abandoned) + ' event(s).';
          });
        });
    }, function (err) { say(err.message, true); });
  }

  function failureFilter() {
    var form = document.getElementById('failure-filter');
    var f = {};
    Array.from(form.elements).forEach(function (el) { if (el.name && el.value.trim()) { f[el.name] = el.value.trim(); } });
    return f;
  }

  function figures(id, pairs) {
    var dl = document.getElementById(id);
    dl.textContent = '';
    pairs.forEach(function (p) {
      var div = document.createElement('div');
      var dt = document.createElement('dt'); dt.textContent = p[0];
      var dd = document.createElement('dd'); dd.textContent = p[1] === null || p[1] === undefined ? '-' : String(p[1]);
      if (p[2]) { dd.className = 'bad'; }
      div.appendChild(dt); div.appendChild(dd); dl.appendChild(div);
    });
  }

  function overview() {
    return api('/overview').then(function (o) {
      var slot = o.outbox.slot;
      var failed = o.consumer_groups.reduce(function (s, g) { return s + g.failed + g.failing; }, 0);
      var held = o.consumer_groups.reduce(function (s, g) { return s + g.held; }, 0);
      figures('overview-figures', [
        ['Relay', o.outbox.relay_mode + (slot ? ' (slot ' + slot.name + ', ' + slot.state + ')' : '')],
        ['Outbox rows pending', o.outbox.pending],
        ['Oldest pending (s)', o.outbox.oldest_pending_age_seconds, o.outbox.oldest_pending_age_seconds > 60],
        ['Slot lag', slot ? slot.lag_bytes + ' B, ' + (slot.lag_seconds === null ? '-' : slot.lag_seconds + ' s') : 'no slot', slot && !!slot.problem],
        ['Outbox rows parked', o.outbox.parked_rows, o.outbox.parked_rows > 0],
        ['Handler events failing or failed', failed, failed > 0],
        ['Events held (no handler yet)', held],
        ['Stuck HTTP records', o.http_records.stuck, o.http_records.stuck > 0],
        ['Handler lag (records)', latest.handler_lag_records],
        ['Dead-lettered per second', latest.dead_lettered_per_second === undefined ? undefined
          : Math.round(latest.dead_lettered_per_second * 100) / 100, latest.dead_lettered_per_second > 0]
      ]);
      if (slot && slot.problem) { say(slot.problem, true); }
      table('groups', [['Group', 'group'], ['Held', 'held', true], ['Failing', 'failing', true], ['Failed', 'failed', true],
        ['Behind', 'behind', true], ['Keys', 'keys', true]], o.consumer_groups);
      table('handlers', [['Handler', 'handler_key'], ['Route', 'route'], ['Claims', 'claims', true],
        ['Processing', 'processing', true], ['Failed', 'failed', true]], o.handlers);
    });
  }

  function chart(id, data, series) {
    var el = document.getElementById(id);
    var width = Math.max(280, Math.min(460, el.parentNode.clientWidth || 460));
    var opts = { width: width, height: 160, series: [{}].concat(series.map(function (s) {
      return { label: s[0], stroke: s[1], width: 2, spanGaps: true };
    })), legend: { show: true } };
    if (charts[id]) { charts[id].setData(data); return; }
    charts[id] = new uPlot(opts, data, el);
  }

  function series() {
    return api('/series').then(function (s) {
      Object.keys(s).forEach(function (k) {
        var values = s[k].filter(function (v) { return v !== null; });
        if (k !== 't' && values.length) { latest[k] = values[values.length - 1]; }
      });
      if (typeof uPlot === 'undefined' || !s.t) { return; }
      chart('chart-backlog', [s.t, s.outbox_pending, s.outbox_parked_rows], [['pending', '#0b57d0'], ['parked', '#a50e0e']]);
      chart('chart-lag', [s.t, s.oldest_pending_age_seconds, s.handler_lag_records], [['oldest pending (s)', '#0b57d0'], ['handler lag (records)', '#e37400']]);
      chart('chart-flow', [s.t, s.handled_per_second, s.parked_per_second, s.dead_lettered_per_second],
        [['handled/s', '#0d652d'], ['parked/s', '#e37400'], ['dead-lettered/s', '#a50e0e']]);
    });
  }

  function groupEvents(g) {
    var box = document.getElementById('group-events');
    box.hidden = false;
    var title = document.getElementById('group-events-title');
    title.textContent = 'Events of ' + g.handler_key + ' / ' + (g.exception_class || g.fingerprint);
    api('/parked' + query({ handler_key: g.handler_key, failure: g.fingerprint })).then(function (rows) {
      table('group-events-table', [['Key', 'key'], ['Event', 'event_id'], ['Type', 'event_type'], ['Tenant', 'tenant_id'],
        ['Status', 'status'], ['Attempts', 'attempts', true], ['Last message', 'message']], rows);
      title.focus();
    });
  }

  function failures() {
    return api('/failures' + query(failureFilter())).then(function (groups) {
      table('failure-groups', [['Handler', 'handler_key'], ['Cause', function (g) { return g.exception_class + ' (' + g.fingerprint + ')'; }],
        ['Events', 'events', true], ['Keys', 'keys', true], ['First seen', 'first_failed_at'], ['Last seen', 'last_failed_at'],
        ['Tenants', 'tenants'], ['Last message', 'message']], groups, function (g) {
        var buttons = [button('Show events', function () { groupEvents(g); }, true)];
        if (operator) {
          var filter = Object.assign({}, failureFilter(), { handler_key: g.handler_key, failure: g.fingerprint });
          buttons.push(button('Retry group', function () { bulk('retry', filter); }));
          buttons.push(button('Abandon group', function () { bulk('abandon', filter); }, true));
        }
        return buttons;
      });
    });
  }

  function lists() {
    return Promise.all([
      api('/parked').then(function (rows) {
        table('parked-events', [['Group', 'group'], ['Key', 'key'], ['Offset', 'offset', true], ['Type', function (e) { return e.event_type + ' v' + e.event_version; }],
          ['Status', 'status'], ['Reason', 'reason'], ['Attempts', 'attempts', true], ['Next attempt', 'next_attempt_at']], rows);
      }),
      api('/outbox/parked').then(function (rows) {
        table('outbox-parked', [['Event', 'event_id'], ['Aggregate', function (p) { return p.aggregate_type + ' ' + p.aggregate_id; }],
          ['Type', 'event_type'], ['Reason', 'reason'], ['Parked at', 'parked_at']], rows, operator ? function (p) {
          return [button('Redrive', function () {
            confirmAction('Redrive ' + p.event_id, 'The event and the unpublished events behind it go to the relay again, in order.',
              function (reason) { return api('/outbox/redrive', { event_id: p.event_id, reason: reason }).then(function (d) { return 'Requeued ' + d.requeued + ' row(s).'; }); });
          })];
        } : null);
      }),
      api('/records/stuck').then(function (rows) {
        table('stuck', [['Tenant', 'tenant_id'], ['User', 'user_id'], ['Route', 'route'], ['Key', 'idempotency_key'],
          ['Claimed at', 'claimed_at'], ['Age (s)', 'age_seconds', true]], rows, operator ? function (r) {
          return [button('Release', function () {
            confirmAction('Release ' + r.idempotency_key, 'The record expires at once; a retry of the request claims it anew.',
              function (reason) {
                return api('/records/release', { tenant_id: r.tenant_id, user_id: r.user_id, route: r.route,
                  idempotency_key: r.idempotency_key, reason: reason }).then(function (d) { return 'Release: ' + d.result + '.'; });
              });
          })];
        } : null);
      }),
      api('/partitions').then(function (rows) {
        table('claim-partitions', [['Partition', 'name'], ['Day', 'day'], ['Rows (est.)', 'rows', true], ['Bytes', 'bytes', true],
          ['Detaching', 'detaching'], ['Dropped at', 'drop_at']], rows);
      }),
      api('/audit').then(function (rows) {
        table('audit-log', [['At', 'at'], ['Operator', 'operator'], ['Via', 'via'], ['Action', 'action'],
          ['Target', function (e) { return JSON.stringify(e.target); }], ['Rows', 'affected', true], ['Reason', 'reason']], rows);
      })
    ]);
  }

  function refresh(all) {
    var work = [series().then(overview)];
    if (all) { work.push(failures(), lists()); }
    return Promise.all(work).catch(function (err) { say(err.message, true); });
  }

  document.getElementById('failure-filter').addEventListener('submit', function (e) {
    e.preventDefault();
    failures().catch(function (err) { say(err.message, true); });
  });

  document.getElementById('diagnose').addEventListener('submit', function (e) {
    e.preventDefault();
    var f = {};
    Array.from(e.target.elements).forEach(function (el) { if (el.name) { f[el.name] = el.value; } });
    api('/records/diagnose' + query(f)).then(function (d) {
      figures('diagnosis', Object.keys(d).map(function (k) { return [k, typeof d[k] === 'object' && d[k] !== null ? JSON.stringify(d[k]) : d[k]]; }));
    }, function (err) { say(err.message, true); });
  });

  document.getElementById('logout').addEventListener('submit', function (e) {
    e.preventDefault();
    fetch(base + '/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-XSRF-TOKEN': cookie('XSRF-TOKEN') } })
      .then(function () { window.location = base + '/login?logout'; });
  });

  api('/me').then(function (me) {
    operator = me.operator;
    document.getElementById('who').textContent = me.name + (operator ? ' (operator)' : ' (viewer)');
    if (operator) {
      var form = document.getElementById('failure-filter');
      form.appendChild(button('Retry all filtered', function () { bulk('retry', failureFilter()); }));
      form.appendChild(button('Abandon all filtered', function () { bulk('abandon', failureFilter()); }, true));
    }
    return refresh(true);
  }).then(function () {
    document.body.setAttribute('data-loaded', 'true');
  });
  setInterval(function () { refresh(false); }, 10000);
})();
