//! Where the MCP server hires: the agents of a local project, run through the gateway's own
//! path in this process ([`Market::local`]), or the agents of a running gateway, called over
//! HTTP with the mandate's account key and the `Ael-Mandate` header ([`Market::remote`]). Either
//! way the money, the mandate's budget and the receipts are the store's, shared with the
//! gateway and `aelc approve`.

use std::sync::Arc;
use std::time::Duration;

use aelc_gateway::AppState;
use aelc_runtime::money::Amount;
use aelc_store::Mandate;
use serde_json::Value;

/// What the server knows of one agent (from the project, or from the gateway's manifest).
#[derive(Clone, Debug)]
pub struct Card {
    /// `owner/name`.
    pub name: String,
    pub version: String,
    pub capability: Option<String>,
    pub description: Option<String>,
    pub price: Amount,
    pub currency: Option<String>,
    /// The manifest (`holon.yaml` as JSON): errors, models, delegates, examples.
    pub manifest: Value,
    pub input_schema: Value,
    pub output_schema: Value,
    /// What keeps it from running there (empty when it can run).
    pub missing: Vec<String>,
}

enum Backend {
    Local(Arc<AppState>),
    Remote {
        base: String,
        key: String,
        http: ureq::Agent,
    },
}

/// See the module doc.
pub struct Market {
    cards: Vec<Card>,
    backend: Backend,
}

impl Market {
    /// The agents of a project served in this process.
    pub fn local(app: Arc<AppState>) -> Market {
        let cards = app
            .project
            .agents
            .iter()
            .map(|a| Card {
                name: a.name.clone(),
                version: a.version.clone(),
                capability: a.capability.clone(),
                description: a.description.clone(),
                price: a.price,
                currency: a.currency.clone(),
                manifest: a.manifest.clone(),
                input_schema: a.input_schema.clone(),
                output_schema: a.output_schema.clone(),
                missing: a.missing.clone(),
            })
            .collect();
        Market {
            cards,
            backend: Backend::Local(app),
        }
    }

    /// The agents of the gateway at `base` (`http://host:port`), read once from its
    /// `/v1/agents` and manifests; calls carry `key` (the mandate's account's API key).
    pub async fn remote(base: &str, key: &str) -> Result<Market, String> {
        let base = base.trim_end_matches('/').to_owned();
        let http: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(600)))
            .build()
            .into();
        let (list_base, list_http) = (base.clone(), http.clone());
        let cards = tokio::task::spawn_blocking(move || read_cards(&list_http, &list_base))
            .await
            .map_err(|e| e.to_string())??;
        Ok(Market {
            cards,
            backend: Backend::Remote {
                base,
                key: key.to_owned(),
                http,
            },
        })
    }

    pub fn cards(&self) -> &[Card] {
        &self.cards
    }

    pub fn card(&self, name: &str) -> Option<&Card> {
        self.cards.iter().find(|c| c.name == name)
    }

    /// Runs `card` on `input` under `mandate`: the response document (`status`, `code`,
    /// `output`, `receipt`), or why there is none.
    pub async fn call(
        &self,
        mandate: &Mandate,
        card: &Card,
        input: &Value,
    ) -> Result<Value, String> {
        match &self.backend {
            Backend::Local(app) => {
                let agent = app
                    .project
                    .agent(&card.name)
                    .ok_or_else(|| format!("no agent {}", card.name))?;
                Ok(crate::run_under_mandate(app, mandate, agent, input)
                    .await?
                    .document())
            }
            Backend::Remote { base, key, http } => {
                let url = format!("{base}/v1/agents/{}/runs", card.name);
                let (http, key, mandate, body, base) = (
                    http.clone(),
                    key.clone(),
                    mandate.id(),
                    input.to_string(),
                    base.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    let mut response = http
                        .post(&url)
                        .header("authorization", &format!("Bearer {key}"))
                        .header("ael-mandate", &mandate)
                        .header("content-type", "application/json")
                        .send(body)
                        .map_err(|e| format!("the gateway at {base} is unreachable: {e}"))?;
                    let status = response.status().as_u16();
                    let text = response
                        .body_mut()
                        .read_to_string()
                        .map_err(|e| format!("the gateway's answer could not be read: {e}"))?;
                    let document: Value = serde_json::from_str(&text).map_err(|_| {
                        format!("the gateway answered {status} with no JSON document")
                    })?;
                    if let Some(error) = document.get("error") {
                        return Err(format!(
                            "{} ({})",
                            error["message"].as_str().unwrap_or("refused"),
                            error["code"].as_str().unwrap_or("error")
                        ));
                    }
                    Ok(document)
                })
                .await
                .map_err(|e| e.to_string())?
            }
        }
    }
}

fn read_cards(http: &ureq::Agent, base: &str) -> Result<Vec<Card>, String> {
    let get = |path: &str| -> Result<Value, String> {
        let mut response = http
            .get(format!("{base}{path}"))
            .call()
            .map_err(|e| format!("the gateway at {base} is unreachable: {e}"))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| format!("{base}{path}: {e}"))?;
        if status != 200 {
            return Err(format!("{base}{path} answered {status}: {text}"));
        }
        serde_json::from_str(&text).map_err(|e| format!("{base}{path}: not JSON: {e}"))
    };
    let list = get("/v1/agents")?;
    let mut cards = Vec::new();
    for summary in list["agents"].as_array().into_iter().flatten() {
        let Some(name) = summary["name"].as_str() else {
            continue;
        };
        let manifest = get(&format!("/v1/agents/{name}"))?;
        let price = &manifest["price"];
        cards.push(Card {
            name: name.to_owned(),
            version: summary["version"].as_str().unwrap_or("").to_owned(),
            capability: summary["capability"].as_str().map(str::to_owned),
            description: summary["description"].as_str().map(str::to_owned),
            price: price["amount"]
                .as_str()
                .and_then(Amount::parse)
                .unwrap_or(Amount::ZERO),
            currency: price["currency"].as_str().map(str::to_owned),
            input_schema: manifest["interface"]["input"].clone(),
            output_schema: manifest["interface"]["output"].clone(),
            missing: if summary["available"].as_bool() == Some(false) {
                vec!["what the gateway cannot run".to_owned()]
            } else {
                Vec::new()
            },
            manifest,
        });
    }
    Ok(cards)
}
