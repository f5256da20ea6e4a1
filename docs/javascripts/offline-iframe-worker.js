/* Search for the site opened from the file system (site/index.html), with no network.
 *
 * Material's search runs in a Web Worker, and browsers refuse to start a worker from a
 * file:// page, so without this the search field is hidden. Material's offline plugin would
 * load a stand-in from a CDN (unpkg), which an offline reader cannot reach; this file is that
 * stand-in, written for this site: on file:// pages, `Worker` runs its script in a hidden
 * same-origin frame and passes messages both ways. Served over http(s) nothing changes.
 * Its name contains "iframe-worker", which tells the offline plugin not to add the CDN one.
 */
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.frame = document.createElement("iframe");
      this.frame.hidden = true;
      this.frame.setAttribute("aria-hidden", "true");
      (document.body || document.documentElement).appendChild(this.frame);
      const scope = this.frame.contentWindow;
      const worker = this;
      scope.postMessage = function (data) {  // the worker's replies reach the page
        worker.dispatchEvent(new MessageEvent("message", { data: data }));
      };
      scope.importScripts = function () {
        throw new Error("importScripts is not available to the offline search worker");
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      this.ready = new Promise(function (resolve, reject) {
        script.onload = resolve;
        script.onerror = reject;
      });
      scope.document.head.appendChild(script);
      this.scope = scope;
    }

    postMessage(data) {  // the page's requests reach the worker once its script has run
      const scope = this.scope;
      this.ready.then(function () {
        scope.dispatchEvent(new MessageEvent("message", { data: data }));
      });
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = FrameWorker;
})();
