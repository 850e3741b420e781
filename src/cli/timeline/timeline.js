// hist timeline: draws the chart from the data embedded in the page (script#timeline-data,
// written by `hist timeline`). No network, no library: the page works opened from disk.
//
// Data (arrays rather than objects, to keep large pages small):
//   txs:   [[id, at (µs since the epoch), actor index, kind, reason | null, changes], …]
//          the transactions the chart refers to
//   axis:  [[column, transactions, first tx, last tx, [[actor index, transactions], …]], …]
//   lanes: [{path, changes, numeric, marks: [[column, changes, first tx, last tx, op,
//            old | null, new | null, flags (1 compacted, 2 forgotten), changes recorded at an
//            ancestor of the path, low?, high?], …]}, …]
//   compactions: [[path, mode, first at, last at, replaced, kept, tx], …]
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('timeline-data').textContent);
  var W = data.columns;
  var PALETTE = 8;
  var txs = new Map();
  data.txs.forEach(function (t) { txs.set(t[0], t); });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function actorClass(i) { return 'a' + Math.min(i, PALETTE); }
  function time(us) {
    return new Date(Math.floor(us / 1000)).toISOString().replace('.000Z', 'Z');
  }
  function day(us) { return time(us).slice(0, 10); }
  function txLine(id) {
    var t = txs.get(id);
    if (!t) return 'tx ' + id;
    var line = 'tx ' + id + ' · ' + time(t[1]) + ' · ' + data.actors[t[2]];
    return t[4] ? line + ': ' + t[4] : line;
  }
  function shown(v) { return v === null ? '(absent)' : v; }
  var OPS = { '+': 'added', '-': 'removed', '~': 'replaced', '>': 'renamed', '0': 'added and removed' };

  // --- legend -------------------------------------------------------------------------
  var legend = [];
  data.actors.slice(0, PALETTE).forEach(function (a, i) {
    legend.push('<span class="key" role="listitem"><span class="swatch ' + actorClass(i) +
      '"></span>' + esc(a) + '</span>');
  });
  if (data.actors.length > PALETTE) {
    legend.push('<span class="key" role="listitem"><span class="swatch a8"></span>' +
      (data.actors.length - PALETTE) + ' other actors</span>');
  }
  legend.push('<span class="key" role="listitem"><span class="swatch valueline"></span>value of a number</span>');
  legend.push('<span class="key" role="listitem"><span class="swatch compacted"></span>compacted by gc</span>');
  legend.push('<span class="key" role="listitem"><span class="swatch forgotten"></span>forgotten value</span>');
  document.getElementById('legend').innerHTML = legend.join('');

  // --- rows -----------------------------------------------------------------------------
  function xOf(us) {
    var span = data.end - data.start;
    if (span <= 0) return 0;
    return Math.max(0, Math.min(W, (us - data.start) / span * W));
  }
  function bands(h, path) {
    var out = '';
    data.compactions.forEach(function (c, i) {
      var p = c[0];
      var covers = path === null || path === p || path.startsWith(p + '/') || path.startsWith(p + '[') || p === '';
      if (!covers) return;
      var x0 = xOf(c[2]), x1 = Math.max(xOf(c[3]), x0 + 2);
      out += '<rect class="band" data-compaction="' + i + '" x="' + x0.toFixed(1) + '" y="0" width="' +
        (x1 - x0).toFixed(1) + '" height="' + h + '"><title>' + esc(c[0] || '(document)') + ': ' +
        c[4] + ' changes compacted into ' + c[5] + ' (' + esc(c[1]) + ', ' + day(c[2]) + ' to ' +
        day(c[3]) + ')</title></rect>';
    });
    return out;
  }

  var html = [];
  // Dates along the axis.
  var ticks = '';
  var n = Math.max(2, Math.min(8, Math.floor(W / 130)));
  for (var i = 0; i <= n; i++) {
    var x = i * W / n, us = data.start + (data.end - data.start) * i / n;
    var anchor = i === 0 ? 'start' : i === n ? 'end' : 'middle';
    ticks += '<line x1="' + x + '" x2="' + x + '" y1="14" y2="20"></line><text x="' + x +
      '" y="11" text-anchor="' + anchor + '">' + day(us) + '</text>';
  }
  html.push('<div class="row ticks" aria-hidden="true"><div class="label"></div><svg class="track" width="' +
    W + '" height="20">' + ticks + '</svg></div>');

  // The transactions.
  var AH = 26;
  var marks = '';
  data.axis.forEach(function (m, i) {
    var cls = actorClass(m[4][0][0]);
    var label;
    if (m[1] === 1) {
      label = txLine(m[2]);
    } else {
      label = m[1] + ' transactions, tx ' + m[2] + ' to tx ' + m[3] + ', by ' + m[4].map(function (a) {
        return data.actors[a[0]] + ' (' + a[1] + ')';
      }).join(', ');
    }
    marks += '<rect class="mark tx ' + cls + '" data-i="' + i + '" data-tx="' + m[2] + '" x="' + m[0] +
      '" y="3" width="3" height="' + (AH - 6) + '" tabindex="-1" role="option" aria-label="' +
      esc(label) + '"></rect>';
  });
  html.push('<div class="row axis-row" data-row="axis"><div class="label"><span>Transactions</span>' +
    '<span class="count">' + data.txCount.toLocaleString('en') + ' touched the key</span></div>' +
    '<svg class="track" width="' + W + '" height="' + AH + '" role="listbox" aria-label="Transactions, ' +
    data.txCount + ' in all">' + bands(AH, null) + marks + '</svg></div>');

  // The lanes.
  data.lanes.forEach(function (lane, li) {
    var h = lane.numeric ? 48 : 22;
    var out = bands(h, lane.path);
    var last = null;
    if (lane.numeric) {
      var lo = Infinity, hi = -Infinity;
      lane.marks.forEach(function (m) {
        [m[5], m[6], m[9], m[10]].forEach(function (v) {
          var f = typeof v === 'number' ? v : parseFloat(v);
          if (isFinite(f)) { lo = Math.min(lo, f); hi = Math.max(hi, f); }
        });
      });
      var top = 4, bottom = h - 10;
      var y = function (v) {
        if (hi === lo) return (top + bottom) / 2;
        return bottom - (v - lo) / (hi - lo) * (bottom - top);
      };
      var pts = [], prev = null, ranges = '';
      lane.marks.forEach(function (m, k) {
        var before = parseFloat(m[5]), after = parseFloat(m[6]);
        if (k === 0 && isFinite(before)) prev = before;
        if (prev !== null) pts.push(m[0] + ',' + y(prev).toFixed(1));
        if (m.length > 10) {
          ranges += '<line class="range" x1="' + m[0] + '" x2="' + m[0] + '" y1="' + y(m[9]).toFixed(1) +
            '" y2="' + y(m[10]).toFixed(1) + '"></line>';
        }
        if (isFinite(after)) {
          pts.push(m[0] + ',' + y(after).toFixed(1));
          prev = after;
          last = m[6];
        } else {
          prev = null;
          last = null;
        }
      });
      if (prev !== null) pts.push(W + ',' + y(prev).toFixed(1));
      out += ranges + '<polyline class="value-line" data-last="' + esc(last === null ? '' : last) +
        '" data-low="' + lo + '" data-high="' + hi + '" points="' + pts.join(' ') + '"></polyline>';
    }
    lane.marks.forEach(function (m, k) {
      var t = txs.get(m[3]);
      var cls = 'mark change ' + actorClass(t ? t[2] : PALETTE);
      if (m[7] & 1) cls += ' compacted';
      if (m[7] & 2) cls += ' forgotten';
      var what = m[7] & 2 ? 'forgotten value' : OPS[m[4]] + ': ' + shown(m[5]) + ' → ' + shown(m[6]);
      var label = (m[1] > 1 ? m[1] + ' changes, ' : '') + txLine(m[3]) + '; ' + what;
      var y0 = lane.numeric ? h - 8 : 3, mh = lane.numeric ? 6 : h - 6;
      out += '<rect class="' + cls + '" data-i="' + k + '" data-tx="' + m[3] + '" data-changes="' + m[1] + '" data-above="' + m[8] +
        '" x="' + m[0] + '" y="' + y0 + '" width="3" height="' + mh + '" tabindex="-1" role="option" aria-label="' +
        esc(label) + '"></rect>';
    });
    var count = lane.changes.toLocaleString('en') + (lane.changes === 1 ? ' change' : ' changes');
    var value = lane.numeric && last !== null ? ' · now <span class="last-value">' + esc(last) + '</span>' : '';
    html.push('<div class="row lane" data-row="' + li + '" data-path="' + esc(lane.path) + '" data-changes="' +
      lane.changes + '"><div class="label"><span class="path" title="' + esc(lane.path || '(document)') +
      '"><bdi>' + esc(lane.path || '(document)') + '</bdi></span><span class="count">' + count + value +
      '</span></div><svg class="track" width="' + W + '" height="' + h + '" role="listbox" aria-label="' +
      esc((lane.path || '(document)') + ', ' + count) + '">' + out + '</svg></div>');
  });

  var lanesEl = document.getElementById('lanes');
  lanesEl.innerHTML = '<svg width="0" height="0" aria-hidden="true" style="position:absolute">' +
    '<defs><pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
    '<rect width="5" height="5" fill="#ffffff"></rect><rect width="2" height="5" fill="#9a9a9a"></rect>' +
    '</pattern></defs></svg>' + html.join('');

  // --- focus, keys, tooltip, detail --------------------------------------------------
  var rows = Array.prototype.slice.call(lanesEl.querySelectorAll('.row[data-row]'));
  rows.forEach(function (row) {
    var first = row.querySelector('.mark');
    if (first) first.setAttribute('tabindex', '0');
  });
  var tip = document.getElementById('tip');
  var chart = document.getElementById('chart');

  function markInfo(el) {
    var row = el.closest('.row');
    var i = +el.getAttribute('data-i');
    if (row.getAttribute('data-row') === 'axis') return { axis: data.axis[i] };
    return { lane: data.lanes[+row.getAttribute('data-row')], mark: data.lanes[+row.getAttribute('data-row')].marks[i] };
  }
  function showTip(el) {
    var info = markInfo(el);
    var text;
    if (info.axis) {
      var m = info.axis;
      if (m[1] === 1) {
        var t = txs.get(m[2]);
        text = 'tx ' + m[2] + ' · ' + time(t[1]) + '\n' + data.actors[t[2]] + (t[4] ? '\n' + t[4] : '') +
          '\n' + t[5] + (t[5] === 1 ? ' change' : ' changes');
      } else {
        text = el.getAttribute('aria-label');
      }
    } else {
      var k = info.mark, lt = txs.get(k[3]);
      text = (info.lane.path || '(document)') + '\n' + (k[1] > 1 ? k[1] + ' changes, last: ' : '') + 'tx ' + k[3] +
        (lt ? ' · ' + data.actors[lt[2]] + (lt[4] ? ': ' + lt[4] : '') : '') + '\n' +
        (k[7] & 2 ? 'forgotten value' : shown(k[5]) + ' → ' + shown(k[6]));
    }
    tip.textContent = text;
    tip.hidden = false;
    var r = el.getBoundingClientRect(), c = chart.getBoundingClientRect();
    var left = r.left - c.left + 8, top = r.bottom - c.top + 4;
    tip.style.left = Math.min(left, c.width - 300) + 'px';
    tip.style.top = top + 'px';
  }
  function hideTip() { tip.hidden = true; }

  function txRef(id) {
    var t = txs.get(id);
    var link = document.getElementById('tx-' + id) ? '<a href="#tx-' + id + '">tx ' + id + '</a>' : 'tx ' + id;
    if (!t) return link;
    return link + ' · ' + esc(time(t[1])) + ' · ' + esc(data.actors[t[2]]) + ' (' + esc(t[3]) + ')' +
      (t[4] ? ' · ' + esc(t[4]) : '');
  }
  var selected = null;
  function select(el) {
    if (selected) selected.classList.remove('selected');
    selected = el;
    el.classList.add('selected');
    var info = markInfo(el), body = [];
    if (info.axis) {
      var m = info.axis;
      body.push('<dt>transactions</dt><dd>' + m[1] + (m[1] > 1 ? ', from ' + txRef(m[2]) + '<br>to ' + txRef(m[3]) : ': ' + txRef(m[2])) + '</dd>');
      body.push('<dt>actors</dt><dd>' + m[4].map(function (a) { return esc(data.actors[a[0]]) + ' (' + a[1] + ')'; }).join(', ') + '</dd>');
    } else {
      var k = info.mark;
      body.push('<dt>path</dt><dd><code>' + esc(info.lane.path || '(document)') + '</code></dd>');
      if (k[1] > 1) {
        body.push('<dt>changes</dt><dd>' + k[1] + ' in this column of the axis: the value before the first, then after the last</dd>');
        body.push('<dt>first</dt><dd>' + txRef(k[2]) + '</dd><dt>last</dt><dd>' + txRef(k[3]) + '</dd>');
      } else {
        body.push('<dt>transaction</dt><dd>' + txRef(k[3]) + '</dd>');
      }
      body.push('<dt>change</dt><dd>' + esc(OPS[k[4]]) + '</dd>');
      if (k[4] === '>') {
        body.push('<dt>from</dt><dd class="value">' + esc(shown(k[5])) + '</dd><dt>value</dt><dd class="value">' + esc(shown(k[6])) + '</dd>');
      } else {
        body.push('<dt>old</dt><dd class="value old">' + esc(shown(k[5])) + '</dd><dt>new</dt><dd class="value new">' + esc(shown(k[6])) + '</dd>');
      }
      if (k[8] > 0) body.push('<dt>recorded above</dt><dd>' + (k[1] > 1 ? k[8] + ' of these changes were' : 'this change was') + ' recorded at an ancestor of the path (a whole object written or removed at once)</dd>');
      if (k.length > 10) body.push('<dt>range</dt><dd>from ' + esc(k[9]) + ' to ' + esc(k[10]) + ' within the column</dd>');
      if (k[7] & 1) body.push('<dt>compacted</dt><dd>in a span compacted by gc: a change there stands for several (the first old value, the last new value)</dd>');
      if (k[7] & 2) body.push('<dt>forgotten</dt><dd>the subject of this value was forgotten (hist forget): it cannot be read any more</dd>');
    }
    document.getElementById('detail-body').innerHTML = '<dl>' + body.join('') + '</dl>';
    document.getElementById('detail').hidden = false;
  }

  function focusMark(el) {
    var row = el.closest('.row');
    var current = row.querySelector('.mark[tabindex="0"]');
    if (current && current !== el) current.setAttribute('tabindex', '-1');
    el.setAttribute('tabindex', '0');
    el.focus();
  }
  function nearest(row, x) {
    var best = null, dist = Infinity;
    row.querySelectorAll('.mark').forEach(function (m) {
      var d = Math.abs(+m.getAttribute('x') - x);
      if (d < dist) { dist = d; best = m; }
    });
    return best;
  }
  lanesEl.addEventListener('keydown', function (e) {
    var el = e.target;
    if (!el.classList || !el.classList.contains('mark')) return;
    var row = el.closest('.row'), all = row.querySelectorAll('.mark');
    var i = +el.getAttribute('data-i'), next = null;
    switch (e.key) {
      case 'ArrowRight': next = all[Math.min(i + 1, all.length - 1)]; break;
      case 'ArrowLeft': next = all[Math.max(i - 1, 0)]; break;
      case 'Home': next = all[0]; break;
      case 'End': next = all[all.length - 1]; break;
      case 'ArrowUp':
      case 'ArrowDown': {
        var r = rows.indexOf(row) + (e.key === 'ArrowUp' ? -1 : 1);
        if (r >= 0 && r < rows.length) next = nearest(rows[r], +el.getAttribute('x'));
        break;
      }
      case 'Enter':
      case ' ': select(el); e.preventDefault(); return;
      case 'Escape': hideTip(); return;
      default: return;
    }
    e.preventDefault();
    if (next) focusMark(next);
  });
  lanesEl.addEventListener('focusin', function (e) {
    if (e.target.classList && e.target.classList.contains('mark')) showTip(e.target);
  });
  lanesEl.addEventListener('focusout', hideTip);
  lanesEl.addEventListener('mouseover', function (e) {
    if (e.target.classList && e.target.classList.contains('mark')) showTip(e.target);
  });
  lanesEl.addEventListener('mouseout', function (e) {
    if (e.target.classList && e.target.classList.contains('mark') && document.activeElement !== e.target) hideTip();
  });
  lanesEl.addEventListener('click', function (e) {
    if (e.target.classList && e.target.classList.contains('mark')) {
      focusMark(e.target);
      select(e.target);
    }
  });

  chart.hidden = false;
  document.getElementById('transactions').open = false;
  var root = document.documentElement;
  root.setAttribute('data-built-ms', performance.now().toFixed(1));
  // Style and layout now, to time them (a headless browser that dumps the page may never
  // run an animation frame).
  lanesEl.getBoundingClientRect();
  root.setAttribute('data-laid-out-ms', performance.now().toFixed(1));
  requestAnimationFrame(function () {
    requestAnimationFrame(function () {
      performance.mark('timeline-drawn');
      root.setAttribute('data-drawn-ms', performance.now().toFixed(1));
    });
  });
})();
