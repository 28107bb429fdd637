/* The page of `commfit report --format html`: draws the numbers of the
 * report's JSON (embedded as #commfit-data) with Chart.js.  It fits and
 * models nothing: the model's lines come evaluated from the analysis
 * (data.html.curves); only unit formatting happens here.  What it drew is
 * written to #commfit-summary as JSON (charts, their datasets and point
 * counts, errors, resources loaded) for tests and other tools. */
(function () {
  'use strict';
  var summary = { charts: [], errors: [], notes: [] };
  window.addEventListener('error', function (e) {
    summary.errors.push(String(e.message || e));
  });

  /* ---- formatting (the text report's units: decimal prefixes) ---- */
  function num3(v) {
    return String(Number(v.toPrecision(3)));
  }
  function scaled(v, units) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    for (var i = 0; i < units.length; i++) {
      /* 999.6 ns reads 1 us, as three digits round it */
      if (a < units[i][0] * 999.5 || i === units.length - 1) return num3(v / units[i][0]) + ' ' + units[i][1];
    }
    return String(v);
  }
  function fmtTime(s) {
    if (s === 0) return '0 s';
    return scaled(s, [[1e-9, 'ns'], [1e-6, 'us'], [1e-3, 'ms'], [1, 's']]);
  }
  function fmtSize(b) {
    if (b !== null && b !== undefined && isFinite(b) && Math.abs(b) < 999.5) return num3(b) + ' B';
    return scaled(b, [[1, 'B'], [1e3, 'kB'], [1e6, 'MB'], [1e9, 'GB'], [1e12, 'TB']]);
  }
  function fmtRate(r) {
    if (r === null || r === undefined) return 'inf';
    return scaled(r, [[1, 'B/s'], [1e3, 'kB/s'], [1e6, 'MB/s'], [1e9, 'GB/s'], [1e12, 'TB/s']]);
  }
  function fmtPct(v) {
    return v === null || v === undefined || !isFinite(v) ? '-' : (100 * v).toFixed(1) + '%';
  }
  /* log axes: label the powers of ten only */
  function logTicks(fmt) {
    return function (v) {
      var l = Math.log10(v);
      return Math.abs(l - Math.round(l)) < 1e-6 ? fmt(v) : '';
    };
  }

  /* ---- DOM (text only: nothing from the profile is parsed as HTML) ---- */
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function byId(id) {
    return document.getElementById(id);
  }
  function table(head, rows, cls) {
    var t = el('table', cls || 'data'), tr = el('tr');
    head.forEach(function (h) { tr.appendChild(el('th', null, h)); });
    t.appendChild(el('thead')).appendChild(tr);
    var tb = t.appendChild(el('tbody'));
    rows.forEach(function (r) {
      var row = el('tr');
      /* words read from the left, numbers from the right */
      r.forEach(function (c) { row.appendChild(el('td', /^[-+0-9.]/.test(String(c)) ? null : 'text', c)); });
      tb.appendChild(row);
    });
    return t;
  }
  /* "world, 4 ranks", "split of world, colour 3, 2 ranks" (the report's comm_name) */
  function commText(o) {
    var n = o.comm_name || o.comm;
    if (!/ ranks?$/.test(n) && o.comm_size > 0) n += ', ' + o.comm_size + ' rank' + (o.comm_size === 1 ? '' : 's');
    return n;
  }

  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

  /* Shading of the startup-bound sizes, vertical markers and p99 whiskers. */
  var marks = {
    id: 'cfMarks',
    beforeDatasetsDraw: function (chart, args, o) {
      var ctx = chart.ctx, a = chart.chartArea, x = chart.scales.x, y = chart.scales.y;
      if (!o) return;
      ctx.save();
      if (o.shadeBelow > 0) {
        var px = Math.min(Math.max(x.getPixelForValue(o.shadeBelow), a.left), a.right);
        ctx.fillStyle = 'rgba(255, 160, 0, 0.13)';
        ctx.fillRect(a.left, a.top, px - a.left, a.bottom - a.top);
        ctx.fillStyle = '#a06000';
        ctx.font = '11px sans-serif';
        if (px - a.left > 90) ctx.fillText('startup-bound (M < n_half)', a.left + 4, a.bottom - 6);
      }
      (o.whiskers || []).forEach(function (w) {
        var wx = x.getPixelForValue(w.x);
        ctx.strokeStyle = 'rgba(80, 80, 80, 0.5)';
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(wx, y.getPixelForValue(w.lo));
        ctx.lineTo(wx, y.getPixelForValue(w.hi));
        ctx.stroke();
      });
      var placed = []; /* labels drawn so far: a label that would overlap one goes a line lower */
      (o.vlines || []).forEach(function (v) {
        var vx = x.getPixelForValue(v.x);
        if (vx < a.left || vx > a.right) return;
        ctx.strokeStyle = v.color || '#a06000';
        ctx.setLineDash([5, 4]);
        ctx.beginPath();
        ctx.moveTo(vx, a.top);
        ctx.lineTo(vx, a.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = v.color || '#a06000';
        ctx.font = '11px sans-serif';
        var w = ctx.measureText(v.label).width, lx = vx + 4 + w > a.right ? vx - 4 - w : vx + 4, ly = a.top + 12;
        while (placed.some(function (p) { return p.y === ly && lx < p.x1 + 6 && lx + w > p.x0 - 6; })) ly += 14;
        placed.push({ x0: lx, x1: lx + w, y: ly });
        ctx.fillText(v.label, lx, ly);
        /* what was drawn, for the page's summary (the first drawing only) */
        if (o.drawn && v.limit && o.drawn.indexOf(v.x) < 0) o.drawn.push(v.x);
      });
      ctx.restore();
    }
  };

  function card(parent, id, title, lines) {
    var c = el('div', 'card');
    c.id = id;
    c.appendChild(el('h3', null, title));
    (lines || []).forEach(function (l) {
      if (l) c.appendChild(el('p', l.cls || 'caption', l.text || l));
    });
    var box = el('div', 'chart');
    var cv = el('canvas');
    box.appendChild(cv);
    c.appendChild(box);
    parent.appendChild(c);
    return cv;
  }

  function record(id, kind, title, datasets, extra) {
    var s = { id: id, kind: kind, title: title, datasets: datasets.map(function (d) {
      return { label: d.label, points: d.data.length };
    }) };
    for (var k in extra || {}) s[k] = extra[k];
    summary.charts.push(s);
  }

  function draw(cv, cfg) {
    cfg.options = cfg.options || {};
    cfg.options.animation = false;
    cfg.options.responsive = true;
    cfg.options.maintainAspectRatio = false;
    cfg.options.plugins = cfg.options.plugins || {};
    cfg.options.plugins.legend = cfg.options.plugins.legend || { position: 'bottom', labels: { boxWidth: 12 } };
    return new Chart(cv, cfg);
  }

  function xy(x, y, extra) {
    var p = { x: x, y: y };
    for (var k in extra || {}) p[k] = extra[k];
    return p;
  }

  /* ---- per fit: time against size, log-log ---- */
  function fitTitle(f) {
    return (f.joint ? 'point to point (all blocking calls)' : f.op) + ' on ' +
      (f.joint ? 'every communicator' : commText(f)) + ', ' + f.path;
  }

  function fitLines(f) {
    var lines = [];
    if (f.nonblocking) {
      lines.push('post-to-completion spans per size; what the operation cost is its time blocked in Wait/Test (see the verdict)');
    } else if (f.fit_ok) {
      lines.push('alpha ' + fmtTime(f.alpha_s) + ' [' + fmtTime(f.ci.alpha_s[0]) + ', ' + fmtTime(f.ci.alpha_s[1]) +
        '], B ' + fmtRate(f.bandwidth_Bps) + ' [' + fmtRate(f.ci.bandwidth_Bps[0]) + ', ' +
        fmtRate(f.ci.bandwidth_Bps[1]) + '], n_half ' + fmtSize(f.n_half_bytes) + ', error ' +
        fmtPct(f.model_error_rms) + ' rms, ' + f.points + '/' + f.sizes + ' sizes' +
        (f.segments.length > 1 ? ', ' + f.segments.length + ' segments' : ''));
      if ((f.protocol_limits || []).length) {
        lines.push('breaks at the library\'s protocol limits: ' + f.protocol_limits.map(function (l) {
          return fmtSize(l.bytes) + ' (' + (l.name || '?') + ')';
        }).join(', '));
      }
    } else {
      lines.push((f.note || 'no fit') + (f.verdict_basis === 'model' ? '; verdict from the link model' : ''));
    }
    var v = f.nonblocking ? 'span from post to completion, not a cost' :
      f.verdict + (f.verdict_basis === 'model' ? ' (link model)' : '') +
      (isFinite(f.startup_share) && f.startup_share !== null ? ', startup ' + fmtPct(f.startup_share) + ' of its time' : '');
    /* without a basis the note above is the verdict, as in the text report */
    if (f.nonblocking || f.verdict_basis) lines.push({ text: v, cls: 'caption verdict' });
    if (f.leaning && !f.nonblocking) {
      lines.push({ text: 'uncertain: ' + f.uncertain_why + '; the estimate leans ' + f.leaning, cls: 'caption uncertain' });
    }
    if (f.wait_share !== null) {
        /* a collective waits for the last rank; of point-to-point calls only
       * a receive posted before its message is timed */
        lines.push((f.kind === 'collective' ? 'wait for the last rank: '
                                            : 'receives posted before their message waited for it: ') +
                   fmtPct(f.wait_share) + ' of the sampled time');
    }
    if (f.zero_byte_p50_s !== null) lines.push('zero-byte calls (not on a log axis): ' + fmtTime(f.zero_byte_p50_s) + ' per call (median)');
    return lines;
  }

  function fitChart(parent, f, i, curve) {
    var bins = f.bins.filter(function (b) { return b.size > 0; });
    var id = 'fit-' + i, title = fitTitle(f);
    var dur = [], xfer = [], p99 = [], out = [], whiskers = [];
    bins.forEach(function (b) {
      var extra = { calls: b.calls, coverage: b.coverage, predicted: b.predicted_s, error: b.model_error, verdict: b.verdict };
      if (b.duration_p50_s > 0) dur.push(xy(b.size, b.duration_p50_s, extra));
      if (b.time_source === 'transfer' && b.p50_s > 0) xfer.push(xy(b.size, b.p50_s, extra));
      if (b.p99_s > 0) {
        p99.push(xy(b.size, b.p99_s, extra));
        var lo = b.time_source === 'transfer' ? Math.min(b.p50_s, b.duration_p50_s) : b.duration_p50_s;
        if (lo > 0) whiskers.push({ x: b.size, lo: lo, hi: b.p99_s });
      }
      if (b.outlier) out.push(xy(b.size, b.p50_s, extra));
    });
    var ds = [
      { label: 'median call duration', data: dur, backgroundColor: palette[0], borderColor: palette[0], pointRadius: 4 },
      { label: 'median transfer time (sampled)', data: xfer, backgroundColor: palette[2], borderColor: palette[2], pointRadius: 4, pointStyle: 'rectRot' },
      { label: 'p99', data: p99, backgroundColor: '#777', borderColor: '#777', pointStyle: 'line', pointRadius: 6, borderWidth: 2 },
      { label: 'left out (outlier)', data: out, borderColor: palette[1], backgroundColor: palette[1], pointStyle: 'crossRot', pointRadius: 8, borderWidth: 2 }
    ];
    var vlines = [], drawn = [];
    if (curve) {
      curve.segments.forEach(function (s, k) {
        ds.push({ label: 'model' + (curve.segments.length > 1 ? ', segment ' + s.segment : '') + ': ' +
            (k === 0 ? 'alpha ' : 'line at 0: ') + fmtTime(s.alpha_s) + ', B ' + fmtRate(s.bandwidth_Bps),
          data: s.points.map(function (p) { return xy(p[0], p[1]); }), showLine: true, pointRadius: 0,
          borderColor: palette[(3 + k) % palette.length], backgroundColor: palette[(3 + k) % palette.length], borderWidth: 2 });
      });
      if (curve.asymptote.length) {
        ds.push({ label: 'n / B, asymptotic B = ' + fmtRate(f.bandwidth_Bps), data: curve.asymptote.map(function (p) { return xy(p[0], p[1]); }),
          showLine: true, pointRadius: 0, borderColor: '#999', borderDash: [2, 3], borderWidth: 1.5 });
      }
      if (curve.startup.length) {
        ds.push({ label: 'startup alpha = ' + fmtTime(f.alpha_s), data: curve.startup.map(function (p) { return xy(p[0], p[1]); }),
          showLine: true, pointRadius: 0, borderColor: '#bbb', borderDash: [6, 4], borderWidth: 1 });
      }
      if (f.n_half_bytes > 0) vlines.push({ x: f.n_half_bytes, label: 'n_half ' + fmtSize(f.n_half_bytes) });
      /* where the library says its protocol changes, and the fit breaks */
      (f.protocol_limits || []).forEach(function (l) {
        vlines.push({ x: l.bytes, label: (l.name || 'protocol limit') + ' ' + fmtSize(l.bytes), limit: true });
      });
    }
    var cv = card(parent, id, title, fitLines(f));
    draw(cv, {
      type: 'scatter',
      data: { datasets: ds },
      options: {
        scales: {
          x: { type: 'logarithmic', title: { display: true, text: 'message size M (bytes)' }, ticks: { callback: logTicks(fmtSize) } },
          y: { type: 'logarithmic', title: { display: true, text: 'time per call' }, ticks: { callback: logTicks(fmtTime) } }
        },
        plugins: {
          cfMarks: { shadeBelow: curve && f.n_half_bytes > 0 ? f.n_half_bytes : 0, vlines: vlines, whiskers: whiskers,
            drawn: drawn },
          tooltip: { callbacks: { label: function (c) {
            var r = c.raw, s = c.dataset.label + ': ' + fmtSize(r.x) + ', ' + fmtTime(r.y);
            if (r.calls !== undefined) {
              s += ' (' + r.calls + ' calls, sampled ' + fmtPct(r.coverage) + '; model ' + fmtTime(r.predicted) +
                ', error ' + fmtPct(r.error) + '; ' + r.verdict + ')';
            }
            return s;
          } } }
        }
      },
      plugins: [marks]
    });
    record(id, 'fit', title, ds, { op: f.op, comm: f.comm, path: f.path, fit_ok: f.fit_ok, n_half_bytes: f.n_half_bytes,
      limits: drawn,
      segments: curve ? curve.segments.length : 0, shaded: !!(curve && f.n_half_bytes > 0) });
  }

  function fits(R) {
    var parent = byId('fit-charts'), curves = R.html.curves, left = [];
    R.fits.forEach(function (f, i) {
      if (i >= curves.length) return;
      if (!f.bins.some(function (b) { return b.size > 0; })) {
        left.push(fitTitle(f) + ': ' + (f.note || 'no payload') + (f.zero_byte_p50_s !== null ? ', ' + fmtTime(f.zero_byte_p50_s) + ' per call (median)' : ''));
        return;
      }
      /* a span's line would read as a startup and a bandwidth: its medians only */
      fitChart(parent, f, i, f.nonblocking ? null : curves[i]);
    });
    var sec = byId('fits');
    if (R.fits.length > curves.length) {
      sec.appendChild(el('p', 'note', (R.fits.length - curves.length) + ' smaller fits not drawn: commfit report --format csv lists every bin.'));
    }
    left.forEach(function (t) { sec.appendChild(el('p', 'note', t)); });
    if (R.fits.length === 0) sec.appendChild(el('p', 'note', 'Nothing was fitted.'));
    sec.appendChild(el('p', 'legend-note', 'Each point is one message-size bin: its median (call duration, and the sampled transfer time where the bin has enough samples), the grey whisker up to its p99. Lines: the fitted model T = alpha + M/B per segment, the asymptote M/B and the startup alpha. Shaded: sizes below n_half, where startup costs more than payload. Dashed verticals: n_half, and the protocol limits the library declares where the fit breaks at them. Hover a point for its numbers.'));
  }

  /* ---- fusion advice: modelled time per step against bucket size ---- */
  function fusion(R) {
    var parent = byId('fusion');
    (R.advice || []).forEach(function (ad, i) {
      if (!(ad.share >= 0.01) || !ad.model || !ad.candidates || ad.candidates.length === 0) return;
      /* one call a step already: nothing to fuse, a flat line (the text above says so) */
      if (ad.verdict === 'no gain' && ad.calls_per_step <= 1) return;
      /* what the text says: an overlapped stream is priced on what the step
       * pays (posts, blocked, polls: predicted_s over the run) against its
       * measured time; a blocking one on the predictor's T(S) */
      var nb = ad.nonblocking && ad.steps > 0;
      /* with the framework's time outside MPI, the measured gap once per
       * call (call_gap_s), as the verdict judges each size */
      var gap = typeof ad.call_gap_s === 'number' && isFinite(ad.call_gap_s) ? ad.call_gap_s : 0;
      var fw = function (calls) { return gap * Math.min(calls, ad.calls_per_step); };
      /* a candidate (or the advice itself, whose fields have the same
       * names) at MPI time and with the framework's; a candidate without an
       * MPI price (beyond the measured sizes with no line) is not drawn */
      var mpi = function (c) { return nb ? c.predicted_s / ad.steps : c.model_step_s; };
      var per = function (c) { return mpi(c) + fw(c.buckets_per_step); };
      var nowStep = (nb ? ad.current_s / ad.steps : ad.model_current_step_s) + fw(ad.calls_per_step);
      var what = (nb ? 'predicted time per step' : 'modelled time per step') + (gap > 0 ? ' (MPI and the framework\'s time outside it)' : '');
      var yTitle = (nb ? 'predicted' : 'modelled') + ' time per step' + (gap > 0 ? ', MPI + framework' : '');
      var id = 'fusion-' + i, title = 'Fusion of ' + ad.op + ' on ' + commText(ad) + ': ' + what + ' against bucket size';
      var cand = ad.candidates.filter(function (c) { return mpi(c) > 0; }).map(function (c) {
        return xy(c.bucket_bytes, per(c), { name: c.name, buckets: c.buckets_per_step, copy: c.copy_step_s });
      });
      var xs = cand.map(function (p) { return p.x; });
      var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
      var ds = [
        { label: 'T(S): candidate bucket sizes', data: cand, showLine: true, borderColor: palette[0], backgroundColor: palette[0], pointRadius: 3 },
        { label: 'calls as they are (' + (nb ? 'measured' : 'model') + '): ' + fmtTime(nowStep) + '/step', data: [xy(lo, nowStep), xy(hi, nowStep)],
          showLine: true, pointRadius: 0, borderColor: palette[1], borderDash: [6, 4] }
      ];
      if (ad.verdict === 'fuse') {
        ds.push({ label: 'advised: ' + fmtSize(ad.bucket_bytes) + ' (' + ad.bucket_bytes + ' B)', data: [xy(ad.bucket_bytes, per(ad), { buckets: ad.buckets_per_step })],
          pointRadius: 8, pointStyle: 'star', borderColor: palette[2], backgroundColor: palette[2], borderWidth: 2 });
      }
      var lines = [ad.verdict === 'fuse' ? 'fuse: buckets of ' + fmtSize(ad.bucket_bytes) + ', saves ' + fmtTime(ad.predicted_saving_s) + ' of ' + fmtTime(ad.current_s) + ' (mean per rank), ' +
        fmtTime(ad.saving_step_s) + '/step (uncertainty ' + fmtTime(ad.saving_uncertainty_step_s) + ')' :
        (ad.verdict || 'no advice') + ': ' + ad.reason];
      if (ad.verdict !== 'fuse' && ad.why) lines.push(ad.why);
      /* how to get the advised buckets: the text report's line (fuse_how, cf_advice_how) */
      if (ad.verdict === 'fuse' && typeof ad.fuse_how === 'string') lines.push(ad.fuse_how);
      if (ad.runs > 1) lines.push(typeof ad.saving_run_spread_step_s === 'number' ?
        'over ' + ad.runs + ' runs of the program: the verdict and the saving are their medians; half the range between them (' + fmtTime(ad.saving_run_spread_step_s) + '/step) is in its uncertainty; the sizes in the chart are this profile\'s' :
        'over ' + ad.runs + ' runs of the program: none advises fusion (or not every run prices the sizes): this profile\'s advice and figures');
      /* a run that measured more than its calls' own time: the text report's
       * sentence (disturbed_note, cf_advice_disturbed_note) */
      if (typeof ad.disturbed_note === 'string') lines.push({ text: ad.disturbed_note, cls: 'caption uncertain' });
      /* the polls' tails: the text report's sentence (polls_note, cf_advice_polls_note) */
      if (typeof ad.polls_note === 'string') lines.push({ text: 'polls beyond their median: ' + ad.polls_note, cls: 'caption uncertain' });
      /* memory the kernel mapped in afresh every step: the text report's
       * sentence (memory_note, cf_advice_memory_note) */
      if (typeof ad.memory_note === 'string') lines.push({ text: 'memory: ' + ad.memory_note, cls: 'caption uncertain' });
      if (!nb && ad.step_refaulted === true && ad.heap_kept === true) lines.push('the advice is the buckets with the heap kept (the price assumes it): MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=1073741824');
      if (ad.extrapolated) lines.push({ text: 'the buckets lie beyond the sizes measured: their times come from the line', cls: 'caption uncertain' });
      /* an advised overlapped stream's price, exposed and hidden: the text
       * report's sentence (hidden_note, cf_advice_hidden_note) */
      if (typeof ad.hidden_note === 'string') lines.push(ad.hidden_note);
      /* recorded with the chart, for the page's readers and its test */
      var skew = nb && isFinite(ad.arrival_skew_step_s) && ad.arrival_skew_step_s !== null ? ad.arrival_skew_step_s : null;
      var hid = nb && isFinite(ad.hidden_saving_step_s) && ad.hidden_saving_step_s !== null ? ad.hidden_saving_step_s : null;
      /* the framework's time outside MPI that the buckets save: the text report's
       * sentence (outside_mpi_note, cf_advice_outside_note) */
      if (typeof ad.outside_mpi_note === 'string') lines.push(ad.outside_mpi_note);
      /* an advised overlapped stream's buckets in flight together: the text
       * report's lines (in_flight_notes, cf_advice_in_flight_notes) */
      (ad.in_flight_notes || []).forEach(function (l) { lines.push(l); });
      var cv = card(parent, id, title, lines);
      draw(cv, {
        type: 'scatter', data: { datasets: ds },
        options: {
          scales: {
            x: { type: 'logarithmic', title: { display: true, text: 'bucket size S' }, ticks: { callback: logTicks(fmtSize) } },
            y: { beginAtZero: true, title: { display: true, text: yTitle }, ticks: { callback: function (v) { return fmtTime(v); } } }
          },
          plugins: { tooltip: { callbacks: { label: function (c) {
            var r = c.raw;
            return (r.name ? r.name + ': ' : '') + fmtSize(r.x) + ': ' + fmtTime(r.y) + '/step' +
              (r.buckets !== undefined ? ', ' + r.buckets + ' calls/step' : '') + (r.copy !== undefined ? ', copies ' + fmtTime(r.copy) : '');
          } } } }
        }
      });
      record(id, 'fusion', title, ds, { op: ad.op, verdict: ad.verdict, bucket_bytes: ad.bucket_bytes, now_step_s: nowStep,
        advised_step_s: ad.verdict === 'fuse' ? per(ad) : null,
        framework_gap_s: gap,
        arrival_skew_step_s: skew, hidden_saving_step_s: hid });
    });
  }

  /* ---- collectives: busbw against size, and the ideal algorithm's ---- */
  function collectives(R) {
    var parent = byId('coll-charts'), groups = {}, order = [];
    (R.collectives || []).forEach(function (c) {
      var k = c.op + '|' + c.comm + '|' + c.path;
      if (!groups[k]) { groups[k] = []; order.push(k); }
      groups[k].push(c);
    });
    var refs = {};
    (R.references || []).forEach(function (r) { refs[r.path] = r; });
    order.slice(0, R.html.max_fits).forEach(function (k, i) {
      var rows = groups[k], c0 = rows[0], id = 'coll-' + i;
      var meas = rows.filter(function (c) { return c.size > 0 && c.busbw_Bps > 0; }).map(function (c) {
        return xy(c.size, c.busbw_Bps, { calls: c.calls, time: c.p50_s, algbw: c.algbw_Bps, eff: c.efficiency });
      });
      if (meas.length === 0) return;
      var ideal = rows.filter(function (c) { return c.size > 0 && c.ideal_busbw_Bps > 0; }).map(function (c) {
        return xy(c.size, c.ideal_busbw_Bps, { time: c.ideal_ring_s });
      });
      var algo = rows.reduce(function (a, c) { return a || c.ideal_algo; }, null);
      var ds = [{ label: 'measured busbw (median)', data: meas, showLine: true, borderColor: palette[0], backgroundColor: palette[0], pointRadius: 4 }];
      if (ideal.length) ds.push({ label: 'ideal ' + algo + ' on the ' + (refs[c0.path] ? refs[c0.path].source : 'link'), data: ideal, showLine: true,
        borderColor: palette[2], backgroundColor: palette[2], borderDash: [6, 4], pointRadius: 3 });
      var title = c0.op + ' on ' + commText(c0) + ', ' + c0.path;
      var lines = ['busbw = size / time x ' + num3(c0.busbw_factor) + ' (nccl-tests)'];
      if (!ideal.length) lines.push({ text: 'ideal: none, no point-to-point fit on this path (give --link RATE,TIME)', cls: 'caption uncertain' });
      var cv = card(parent, id, title, lines);
      draw(cv, {
        type: 'scatter', data: { datasets: ds },
        options: {
          scales: {
            x: { type: 'logarithmic', title: { display: true, text: 'size' }, ticks: { callback: logTicks(fmtSize) } },
            y: { type: 'logarithmic', title: { display: true, text: 'bus bandwidth' }, ticks: { callback: logTicks(fmtRate) } }
          },
          plugins: { tooltip: { callbacks: { label: function (c) {
            var r = c.raw;
            return c.dataset.label + ': ' + fmtSize(r.x) + ', busbw ' + fmtRate(r.y) + ', ' + fmtTime(r.time) +
              (r.calls !== undefined ? ' (' + r.calls + ' calls, algbw ' + fmtRate(r.algbw) + ', efficiency ' + fmtPct(r.eff) + ')' : '');
          } } } }
        }
      });
      record(id, 'busbw', title, ds, { op: c0.op, comm: c0.comm });
    });
    if (order.length === 0) byId('collectives').appendChild(el('p', 'note', 'No collectives with payload.'));
  }

  /* ---- ranks ---- */
  function rankBars(parent, id, title, rows, labels, caption) {
    var ds = [
      { label: 'waiting (sampled collectives)', data: rows.map(function (r) { return r.wait_s || 0; }), backgroundColor: palette[1], stack: 'mpi' },
      { label: 'transfer (sampled collectives)', data: rows.map(function (r) { return r.transfer_s || 0; }), backgroundColor: palette[2], stack: 'mpi' },
      { label: 'rest of the MPI time', data: rows.map(function (r) { return r.other_s || 0; }), backgroundColor: '#9ecae1', stack: 'mpi' }
    ];
    var cv = card(parent, id, title, caption);
    cv.parentNode.className = 'chart wide';
    draw(cv, {
      type: 'bar', data: { labels: labels, datasets: ds },
      options: {
        scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: 'MPI time' }, ticks: { callback: function (v) { return fmtTime(v); } } } },
        plugins: { tooltip: { callbacks: {
          title: function (items) { var r = rows[items[0].dataIndex]; return 'rank ' + r.rank + ' on ' + r.host + ' (node ' + r.node + ')'; },
          label: function (c) { return c.dataset.label + ': ' + fmtTime(c.raw); },
          footer: function (items) { var r = rows[items[0].dataIndex]; return 'MPI ' + fmtTime(r.mpi_s) + ' of ' + fmtTime(r.wall_s) + ' wall'; }
        } } }
      }
    });
    record(id, 'ranks', title, ds, { ranks: rows.length });
  }

  function ranks(R) {
    var parent = byId('rank-charts'), rk = R.html.ranks, mt = R.mpi_time;
    if (!rk || rk.n === 0) { parent.appendChild(el('p', 'note', 'No ranks listed.')); return; }
    var cap = ['MPI time: min ' + fmtTime(mt.min_s) + ' (rank ' + mt.min_rank + '), mean ' + fmtTime(mt.mean_s) + ', max ' + fmtTime(mt.max_s) +
      ' (rank ' + mt.max_rank + '); imbalance max/mean - 1 = ' + fmtPct(mt.imbalance)];
    if (rk.shown === 'all') {
      rankBars(parent, 'ranks-all', 'MPI time per rank: waiting and transfer over its sampled collective calls, the rest of its MPI time',
        rk.rows, rk.rows.map(function (r) { return String(r.rank); }), cap);
    } else {
      rankBars(parent, 'ranks-edges', 'The ' + rk.rows.length / 2 + ' ranks with the most and the least MPI time, of ' + rk.n,
        rk.rows, rk.rows.map(function (r) { return 'rank ' + r.rank; }), cap);
      var h = rk.histogram, n = h.counts.length, w = (h.hi_s - h.lo_s) / n;
      var labels = h.counts.map(function (c, k) { return fmtTime(h.lo_s + (k + 0.5) * w); });
      var ds = [{ label: 'ranks', data: h.counts, backgroundColor: palette[0] }];
      var cv = card(parent, 'ranks-hist', 'MPI time per rank: how many ranks spent how long', ['from ' + fmtTime(h.lo_s) + ' to ' + fmtTime(h.hi_s) + ' in ' + n + ' bins']);
      cv.parentNode.className = 'chart wide';
      draw(cv, { type: 'bar', data: { labels: labels, datasets: ds },
        options: { scales: { y: { title: { display: true, text: 'ranks' } }, x: { title: { display: true, text: 'MPI time' } } },
          plugins: { legend: { display: false }, tooltip: { callbacks: { title: function (items) {
            var k = items[0].dataIndex; return fmtTime(h.lo_s + k * w) + ' .. ' + fmtTime(h.lo_s + (k + 1) * w);
          } } } } } });
      record('ranks-hist', 'rank-histogram', 'MPI time per rank histogram', ds, { ranks: rk.n });
      var q = rk.quantiles, names = q.q.map(function (v) { return v === 0 ? 'min' : v === 1 ? 'max' : 'p' + Math.round(100 * v); });
      parent.appendChild(el('h3', null, 'Quantiles over ' + rk.n + ' ranks'));
      parent.appendChild(table(['quantity'].concat(names), [
        ['MPI'].concat(q.mpi_s.map(fmtTime)), ['waiting'].concat(q.wait_s.map(fmtTime)),
        ['transfer'].concat(q.transfer_s.map(fmtTime)), ['wall'].concat(q.wall_s.map(fmtTime))]));
    }
    (R.late_arrivals || []).forEach(function (l) {
      parent.appendChild(el('h3', null, 'Late arrivals on ' + commText(l) + ': ' + l.instances + ' sampled instances' +
        (l.comm_size > 0 ? '; evenly spread, each rank would be last in ' + fmtPct(1 / l.comm_size) : '')));
      parent.appendChild(table(['rank', 'last', 'share'], l.last.slice(0, 8).map(function (x) {
        return [x.rank, x.count + ' times', fmtPct(x.share)];
      })));
    });
  }

  /* ---- communication matrix: a heat map of bytes, sender by receiver, all
   * communicators together or one of them (a selector, the busiest first) ---- */
  function matrix(R) {
    var parent = byId('matrix-chart'), m = R.html.matrix;
    if (!m) {
      parent.appendChild(el('p', 'note', 'Not recorded: the profile has no matrix (recorded by an older commfit).'));
      return;
    }
    var maps = m.maps || [], msgs = 0, bytes = 0;
    m.cells.forEach(function (c) { msgs += c[2]; bytes += c[3]; });
    var title = 'Bytes sent, sender (rows) by receiver (columns), world ranks';
    var card = el('div', 'card');
    card.id = 'matrix';
    card.appendChild(el('h3', null, title));
    card.appendChild(el('p', 'caption', m.pairs + ' (sender, receiver, communicator) rows over ' + m.ranks + ' ranks: ' + msgs + ' messages, ' + fmtSize(bytes) +
      (m.block > 1 ? '; each cell sums ' + m.block + ' x ' + m.block + ' ranks' : '')));
    if (m.lost_messages > 0) card.appendChild(el('p', 'caption uncertain', m.lost_messages + ' messages went to peers beyond the plugin\'s table and are not drawn'));
    parent.appendChild(card);
    if (m.cells.length === 0) {
      card.appendChild(el('p', 'note', 'No point-to-point messages.'));
      record('matrix', 'matrix', title, [{ label: 'cells', data: m.cells }], { blocks: m.blocks, block: m.block, messages: msgs, bytes: bytes, maps: 0 });
      return;
    }
    var views = [{ name: 'all communicators', cells: m.cells, messages: msgs, bytes: bytes }].concat(maps.map(function (x) {
      return { name: (x.source === 'ucx' ? 'beneath collectives (UCX): ' : '') + x.name, cells: x.cells, messages: x.messages, bytes: x.bytes };
    }));
    var sel = el('select', 'matrix-comm');
    sel.id = 'matrix-comm';
    views.forEach(function (v, k) {
      var opt = el('option', null, v.name + ' (' + v.messages + ' messages, ' + fmtSize(v.bytes) + ')');
      opt.value = String(k);
      sel.appendChild(opt);
    });
    card.appendChild(sel);
    if (m.more_maps > 0) card.appendChild(el('p', 'caption', m.more_maps + ' quieter communicators are in the total only (commfit report --matrix --format csv lists them)'));
    var side = Math.min(560, Math.max(160, m.blocks * 24)), cell = side / m.blocks, left = 56, top = 10;
    var cv = el('canvas', 'heat');
    cv.width = left + side + 90;
    cv.height = top + side + 44;
    card.appendChild(cv);
    var hover = el('p', 'caption', 'Hover a cell for its numbers.');
    card.appendChild(hover);
    var ctx = cv.getContext('2d'), at = {}, max = 0;
    var colour = function (b) {
      var t = max > 1 ? Math.log(1 + b) / Math.log(1 + max) : 1;
      var r = Math.round(255 - t * (255 - 8)), g = Math.round(255 - t * (255 - 48)), bl = Math.round(255 - t * (255 - 107));
      return 'rgb(' + r + ',' + g + ',' + bl + ')';
    };
    var draw = function (cells) {
      at = {};
      max = 0;
      cells.forEach(function (c) { max = Math.max(max, c[3]); at[c[0] * m.blocks + c[1]] = c; });
      ctx.clearRect(0, 0, cv.width, cv.height);
      ctx.fillStyle = '#fff';
      ctx.fillRect(left, top, side, side);
      cells.forEach(function (c) {
        ctx.fillStyle = colour(c[3]);
        ctx.fillRect(left + c[1] * cell, top + c[0] * cell, Math.max(cell, 1), Math.max(cell, 1));
      });
      ctx.strokeStyle = '#999';
      ctx.strokeRect(left, top, side, side);
      ctx.fillStyle = '#333';
      ctx.font = '11px sans-serif';
      var label = function (b) { return m.block > 1 ? String(b * m.block) : String(b); };
      var ticks = m.blocks <= 16 ? m.blocks : 5;
      for (var k = 0; k < ticks; k++) {
        var b = ticks === m.blocks ? k : Math.round(k * (m.blocks - 1) / (ticks - 1));
        ctx.fillText(label(b), left + (b + 0.5) * cell - 4, top + side + 14);
        ctx.fillText(label(b), left - 30, top + (b + 0.5) * cell + 4);
      }
      ctx.fillText('receiver', left + side / 2 - 20, top + side + 32);
      ctx.save();
      ctx.translate(12, top + side / 2 + 20);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText('sender', 0, 0);
      ctx.restore();
      for (var y = 0; y < side; y++) {
        ctx.fillStyle = colour(max * (1 - y / side));
        ctx.fillRect(left + side + 20, top + y, 14, 1);
      }
      ctx.fillStyle = '#333';
      ctx.fillText(fmtSize(max), left + side + 38, top + 10);
      ctx.fillText('0 B', left + side + 38, top + side);
    };
    draw(m.cells);
    sel.addEventListener('change', function () { draw(views[Number(sel.value)].cells); });
    cv.addEventListener('mousemove', function (e) {
      var r = cv.getBoundingClientRect(), x = e.clientX - r.left - left, yy = e.clientY - r.top - top;
      var col = Math.floor(x / cell), row = Math.floor(yy / cell), c = at[row * m.blocks + col];
      if (col < 0 || row < 0 || col >= m.blocks || row >= m.blocks) return;
      var ranks = function (b) { return m.block > 1 ? 'ranks ' + b * m.block + '-' + Math.min(m.ranks - 1, (b + 1) * m.block - 1) : 'rank ' + b; };
      hover.textContent = ranks(row) + ' to ' + ranks(col) + ': ' + (c ? c[2] + ' messages, ' + fmtSize(c[3]) + ', mean ' + fmtSize(c[3] / c[2]) : 'nothing');
    });
    record('matrix', 'matrix', title, [{ label: 'cells', data: m.cells }], { blocks: m.blocks, block: m.block, messages: msgs, bytes: bytes, maps: maps.length });
  }


  /* ---- regions ---- */
  function regions(R) {
    var parent = byId('region-charts'), regs = R.regions || [];
    if (regs.length === 0) {
      parent.appendChild(el('p', 'note', 'No regions: the program opened none with MPI_Pcontrol(1, "name").'));
      return;
    }
    var shown = regs.slice().sort(function (a, b) { return b.time_s - a.time_s; }).slice(0, 30);
    var totals = {};
    shown.forEach(function (g) { g.operations.forEach(function (o) { totals[o.op] = (totals[o.op] || 0) + o.time_s; }); });
    var ops = Object.keys(totals).sort(function (a, b) { return totals[b] - totals[a]; });
    var top = ops.slice(0, 6), rest = ops.length > 6;
    var labels = shown.map(function (g) { return g.region === null ? '(outside regions)' : g.region; });
    var ds = top.map(function (op, k) {
      return { label: op, backgroundColor: palette[k % palette.length], stack: 'r', data: shown.map(function (g) {
        return g.operations.filter(function (o) { return o.op === op; }).reduce(function (s, o) { return s + o.time_per_rank_s; }, 0);
      }) };
    });
    if (rest) ds.push({ label: 'other operations', backgroundColor: '#bbb', stack: 'r', data: shown.map(function (g) {
      return g.operations.filter(function (o) { return top.indexOf(o.op) < 0; }).reduce(function (s, o) { return s + o.time_per_rank_s; }, 0);
    }) });
    var cv = card(parent, 'regions-chart', 'MPI time per rank by region (own: calls whose innermost region it is), by operation',
      regs.length > shown.length ? [(regs.length - shown.length) + ' smaller regions not drawn'] : []);
    cv.parentNode.className = 'chart wide';
    cv.parentNode.style.height = Math.max(160, 40 + 28 * shown.length) + 'px';
    draw(cv, { type: 'bar', data: { labels: labels, datasets: ds },
      options: { indexAxis: 'y', scales: { x: { stacked: true, ticks: { callback: function (v) { return fmtTime(v); } } }, y: { stacked: true } },
        plugins: { tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + fmtTime(c.raw) + ' per rank'; } } } } } });
    record('regions-chart', 'regions', 'regions', ds, { regions: shown.length });
    parent.appendChild(table(['region', 'entries', 'own/rank', 'inclusive/rank', 'share'], regs.map(function (g) {
      return [g.region === null ? '(outside regions)' : g.region, g.entries === null ? '-' : g.entries, fmtTime(g.time_per_rank_s),
        fmtTime(g.inclusive_per_rank_s), fmtPct(g.share)];
    })));
  }

  /* ---- operations ---- */
  function operations(R) {
    var rows = (R.operations || []).slice(0, 300).map(function (o) {
      return [o.op + (o.nonblocking ? '*' : ''), commText(o), o.path, o.calls, fmtSize(o.bytes), fmtTime(o.time_per_rank_s),
        fmtPct(o.share), o.nonblocking ? (o.share !== null ? (o.hidden !== null && o.hidden !== undefined ?
          'blocked, ' + fmtPct(o.hidden) + ' hidden' : 'blocked in waits') : 'span, not a cost') : (o.verdict || 'not fitted'),
        fmtPct(o.startup_share), fmtPct(o.wait_share)];
    });
    var p = byId('op-table');
    p.appendChild(table(['operation', 'communicator', 'path', 'calls', 'bytes', 'time/rank', 'share', 'verdict', 'startup', 'wait'], rows));
    if (R.operations.length > rows.length) p.appendChild(el('p', 'note', (R.operations.length - rows.length) + ' more operations: see --format json.'));
    p.appendChild(el('p', 'legend-note', R.mpi_time && R.mpi_time.waits_charged ?
      '* nonblocking: time blocked in Wait/Test on it (its spans from post to completion overlap other work and are not costs); wait: share of the sampled calls\' time spent waiting for late ranks (collectives: every sampled instance; point-to-point: the sampled receives posted before their message, a late sender\'s wait).' :
      '* nonblocking: time from post to completion, which overlaps other work; wait: share of the sampled calls\' time spent waiting for late ranks (collectives: every sampled instance; point-to-point: the sampled receives posted before their message, a late sender\'s wait).'));
    summary.operations = R.operations.length;
    var comms = R.communicators || [];
    if (comms.some(function (c) { return c.comm !== 'world' && c.comm !== 'self'; })) {
      p.appendChild(el('h3', null, 'Communicators'));
      p.appendChild(table(['label', 'name', 'made by', 'description', 'ranks', 'nodes'], comms.map(function (c) {
        return [c.comm, c.comm_name, c.made_by, c.description || '-', c.size, c.nodes];
      })));
    }
    summary.communicators = comms.length;
  }

  var R;
  try {
    R = JSON.parse(byId('commfit-data').textContent);
  } catch (e) {
    summary.errors.push('report data: ' + e.message);
  }
  if (R) {
    [fusion, fits, collectives, ranks, matrix, regions, operations].forEach(function (f) {
      try {
        f(R);
      } catch (e) {
        summary.errors.push(f.name + ': ' + e.message);
        console.error('commfit report: ' + f.name + ': ' + e.message);
      }
    });
  }
  summary.resources = performance.getEntriesByType('resource').map(function (e) { return e.name; });
  summary.done = true;
  byId('commfit-summary').textContent = JSON.stringify(summary);
})();
